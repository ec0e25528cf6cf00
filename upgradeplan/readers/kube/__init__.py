"""Reading a live cluster: kubeconfig merge, HTTP transport, the read itself, objects to facts."""
