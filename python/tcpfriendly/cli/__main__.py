"""``python -m tcpfriendly.cli`` is ``tcpf``."""

from .main import main

main()
