import BeaconKit
import BeaconRotation
import Foundation
import Hummingbird

/// Every refusal the API gives: a status and a JSON body naming the field and the reason,
/// `{"error":{"field":"sightings[3].rssi","message":"expected an integer in -127…20, found 300"}}`.
public struct APIError: HTTPResponseError, Sendable {
    public var status: HTTPResponse.Status
    public var field: String
    public var message: String
    public var headers: HTTPFields = [:]

    public init(_ status: HTTPResponse.Status, field: String, _ message: String) {
        self.status = status
        self.field = field
        self.message = message
    }

    struct Body: Encodable {
        struct Detail: Encodable {
            var field: String
            var message: String
        }
        var error: Detail
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        let data = try JSONEncoder().encode(Body(error: .init(field: field, message: message)))
        var fields = headers
        fields[.contentType] = "application/json"
        return Response(status: status, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// What a 503 asks a client to wait: about one PostgreSQL restart.
    static let retryAfterSeconds = 2

    /// The API's answer for any error thrown by a handler.
    static func from(_ error: any Error) -> APIError? {
        switch error {
        case let error as APIError:
            return error
        case let error as RegistryError:
            let status: HTTPResponse.Status = switch error.kind {
            case .notFound: .notFound
            case .conflict, .exhausted: .conflict
            case .invalid: .unprocessableContent
            }
            return APIError(status, field: error.field, error.message)
        case let error as RotationInputError:
            return APIError(.unprocessableContent, field: error.field, error.reason)
        case let error as ServerInputError:
            return APIError(.badRequest, field: error.field, error.reason)
        case let error as DecodingError:
            let (field, reason) = DecodingFailure.describe(error)
            return APIError(.badRequest, field: field, reason)
        case let error as any HTTPResponseError where error.status == .contentTooLarge:
            return APIError(.contentTooLarge, field: "body", "the body is larger than this endpoint accepts")
        case let error where DatabaseUnavailable.describes(error):
            var refusal = APIError(.serviceUnavailable, field: "database", "the database is unavailable; nothing of this request was stored, send it again later")
            refusal.headers[.retryAfter] = "\(retryAfterSeconds)"
            return refusal
        default:
            return nil
        }
    }
}

/// Turns thrown errors into `APIError` bodies, so clients always get a field and a reason.
struct APIErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            if let apiError = APIError.from(error) {
                return try apiError.response(from: request, context: context)
            }
            throw error
        }
    }
}
