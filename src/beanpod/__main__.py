from beanpod.cli import main

main()
