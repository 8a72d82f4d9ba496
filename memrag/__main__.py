from memrag.cli import main

raise SystemExit(main())
