import sys

from tomsynth.cli import main

sys.exit(main())
