public import FleetProtos

/// The message types a peer can send us, for the fuzz targets and the tests that read their
/// corpora: not part of the library's API.
public enum PeerMessageTypes {
  /// Every message a peer can send us or that travels inside one: the Fleet Engine trip API, our
  /// trip feed, google.rpc's status and error details, and the well-known types they hold.
  /// The fuzz corpus's seeds name their type by index here: append new types at the end.
  public static let all: [any ProtoMessage.Type] = [
    FleetEngine.Trip.self, FleetEngine.StopLocation.self, FleetEngine.TerminalPointId.self,
    FleetEngine.TerminalLocation.self, FleetEngine.TripWaypoint.self,
    FleetEngine.VehicleAttribute.self, FleetEngine.VehicleLocation.self,
    FleetEngine.TripAttribute.self, FleetEngine.RequestHeader.self,
    FleetEngine.SpeedReadingInterval.self, FleetEngine.ConsumableTrafficPolyline.self,
    FleetEngine.CreateTripRequest.self, FleetEngine.GetTripRequest.self,
    FleetEngine.DeleteTripRequest.self, FleetEngine.ReportBillableTripRequest.self,
    FleetEngine.UpdateTripRequest.self, FleetEngine.SearchTripsRequest.self,
    FleetEngine.SearchTripsResponse.self, FleetFeed.WatchTripRequest.self,
    FleetFeed.TripUpdate.self, GoogleRPC.Status.self, GoogleRPC.ErrorInfo.self,
    GoogleRPC.RetryInfo.self, GoogleRPC.DebugInfo.self, GoogleRPC.QuotaFailure.self,
    GoogleRPC.QuotaFailure.Violation.self, GoogleRPC.PreconditionFailure.self,
    GoogleRPC.PreconditionFailure.Violation.self, GoogleRPC.BadRequest.self,
    GoogleRPC.BadRequest.FieldViolation.self, GoogleRPC.RequestInfo.self,
    GoogleRPC.ResourceInfo.self, GoogleRPC.Help.self, GoogleRPC.Help.Link.self,
    GoogleRPC.LocalizedMessage.self, GoogleProtobuf.AnyMessage.self,
    GoogleProtobuf.Duration.self, GoogleProtobuf.Empty.self, GoogleProtobuf.FieldMask.self,
    GoogleProtobuf.Timestamp.self, GoogleProtobuf.DoubleValue.self,
    GoogleProtobuf.FloatValue.self, GoogleProtobuf.Int64Value.self,
    GoogleProtobuf.UInt64Value.self, GoogleProtobuf.Int32Value.self,
    GoogleProtobuf.UInt32Value.self, GoogleProtobuf.BoolValue.self,
    GoogleProtobuf.StringValue.self, GoogleProtobuf.BytesValue.self, GoogleType.LatLng.self,
  ]
}
