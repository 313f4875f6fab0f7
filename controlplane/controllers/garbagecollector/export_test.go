package garbagecollector

// GraphNodes returns how many objects c's graph holds.
func GraphNodes(c *Controller) int {
	c.graph.mu.Lock()
	defer c.graph.mu.Unlock()
	return c.graph.len()
}
