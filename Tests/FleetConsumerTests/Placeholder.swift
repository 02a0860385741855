// Placeholder while the test target is being laid down.
