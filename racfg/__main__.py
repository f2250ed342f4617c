from racfg.cli import main

main()
