from accelopt_graph.cli import main

main()
