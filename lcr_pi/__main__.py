from lcr_pi.cli import main

raise SystemExit(main())
