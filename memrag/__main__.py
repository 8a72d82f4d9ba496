from memrag.cli.main import main

raise SystemExit(main())
