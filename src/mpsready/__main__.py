from mpsready.cli import main

raise SystemExit(main())
