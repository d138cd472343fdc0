from eval.cli import main

raise SystemExit(main())
