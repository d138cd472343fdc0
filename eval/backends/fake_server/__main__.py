"""`python -m eval.backends.fake_server`: the server in this process (see its `process` module)."""
import sys

from eval.backends.fake_server.process import main

if __name__ == "__main__":
    sys.exit(main())
