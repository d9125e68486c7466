"""The bibgraph command line: its options and commands, and the dataset version a build or an add writes."""
