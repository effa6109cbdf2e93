from infrafit.cli import main

raise SystemExit(main())
