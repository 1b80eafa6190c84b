from tabret.cli import main

raise SystemExit(main())
