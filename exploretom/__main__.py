import sys

from exploretom.cli import main

sys.exit(main())
