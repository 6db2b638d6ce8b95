from tablescan.cli import main

main()
