// What a FleetSimulator user needs from the layers below, so that `import FleetSimulator` is
// enough: the Fleet Engine message types the simulator serves.

@_exported public import FleetProtos
