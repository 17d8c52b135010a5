import sys

from memgym.cli import main

sys.exit(main())
