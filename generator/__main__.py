import signal

from generator.cli import main

# A reader that stops early (`python -m generator render | head`) ends the command quietly, as for any shell tool.
signal.signal(signal.SIGPIPE, signal.SIG_DFL)
raise SystemExit(main())
