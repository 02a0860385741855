// Placeholder while the module is being laid down; replaced by the fleet-follow command.
print("fleet-follow: not built yet")
