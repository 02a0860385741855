// Placeholder while the module is being laid down; replaced by TripService and friends.
