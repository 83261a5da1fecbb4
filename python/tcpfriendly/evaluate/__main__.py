import sys

from .cli import evaluate_command

sys.exit(evaluate_command(sys.argv[1:]))
