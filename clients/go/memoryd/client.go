// Package memoryd is the small helper layer over the generated memoryd.v1
// stubs (package memorydv1): a connection with the client conventions, a
// Watch that resumes from its last seq, and errors with their google.rpc
// details.
//
//	client, err := memoryd.Dial("127.0.0.1:50051", memoryd.WithToken(token))
//	defer client.Close()
//	history, err := client.Memory.GetHistory(ctx, &memorydv1.GetHistoryRequest{SessionId: "s1"})
//
// Every call on the connection gets the bearer token, a deadline when its
// context has none (unary calls), an idempotency key when it is an append
// without one, and gRPC retries on UNAVAILABLE for the RPCs the contract's
// service config marks idempotent (see docs/CLIENTS.md).
package memoryd

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	_ "embed"
	"encoding/hex"
	"errors"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"

	memorydv1 "github.com/memoryd/memoryd/clients/go/memoryd/v1"
)

// ServiceConfig is the contract's gRPC service config: the idempotent RPCs
// carry a retry policy on UNAVAILABLE, the others none. The same document
// ships with every language's client (proto/memoryd/v1 in the repository).
//
//go:embed memoryd_grpc_service_config.json
var ServiceConfig string

// DefaultTimeout is the deadline of unary calls whose context has none.
const DefaultTimeout = 10 * time.Second

// Client is a connection to memoryd and the stubs of its six services.
type Client struct {
	renewsTokens bool // a TokenProvider gives each call its token: a Watch resumes after its token expired

	Conn      *grpc.ClientConn
	Memory    memorydv1.MemoryServiceClient
	Metadata  memorydv1.MetadataServiceClient
	Events    memorydv1.EventServiceClient
	Vectors   memorydv1.VectorServiceClient
	Summaries memorydv1.SummaryServiceClient
	Entries   memorydv1.EntryServiceClient
}

type settings struct {
	creds         credentials.TransportCredentials
	token         string
	tokenProvider TokenProvider
	timeout       time.Duration
	serviceConfig string
	dialOptions   []grpc.DialOption
}

// Option configures Dial.
type Option func(*settings)

// WithToken sends `authorization: Bearer <token>` on every call.
func WithToken(token string) Option { return func(s *settings) { s.token = token } }

// TokenProvider gives the bearer token of the next call. It is called for
// every call and every (re)opening of a Watch stream, so it can hand out a
// fresh JWT before the old one expires (cache the token and refresh it near
// its exp: it is called often). An error fails the call.
type TokenProvider func(ctx context.Context) (string, error)

// WithTokenProvider sends the provider's token on every call instead of a
// fixed one. A Watch stream the server ends because its token expired
// (UNAUTHENTICATED, reason TOKEN_EXPIRED) then resumes with the next token.
func WithTokenProvider(provider TokenProvider) Option {
	return func(s *settings) { s.tokenProvider = provider }
}

// WithTLS connects over TLS (mTLS when cfg has client certificates); the
// default is a plaintext connection, what the embedded server serves on loopback.
func WithTLS(cfg *tls.Config) Option {
	return func(s *settings) { s.creds = credentials.NewTLS(cfg) }
}

// WithTimeout sets the deadline of unary calls whose context has none.
func WithTimeout(d time.Duration) Option { return func(s *settings) { s.timeout = d } }

// WithServiceConfig replaces the contract's service config (for example with
// other backoff numbers); "" turns retries off.
func WithServiceConfig(json string) Option { return func(s *settings) { s.serviceConfig = json } }

// WithDialOptions adds gRPC dial options of your own (interceptors, ...),
// applied after the client's.
func WithDialOptions(opts ...grpc.DialOption) Option {
	return func(s *settings) { s.dialOptions = append(s.dialOptions, opts...) }
}

// Dial creates a client for target ("host:port"). Like grpc.NewClient it
// does not connect until the first call.
func Dial(target string, opts ...Option) (*Client, error) {
	s := settings{creds: insecure.NewCredentials(), timeout: DefaultTimeout, serviceConfig: ServiceConfig}
	for _, opt := range opts {
		opt(&s)
	}
	dial := []grpc.DialOption{
		grpc.WithTransportCredentials(s.creds),
		grpc.WithChainUnaryInterceptor(defaultDeadline(s.timeout), idempotencyKeys),
	}
	if s.serviceConfig != "" {
		dial = append(dial, grpc.WithDefaultServiceConfig(s.serviceConfig))
	} else {
		dial = append(dial, grpc.WithDisableRetry())
	}
	switch {
	case s.token != "" && s.tokenProvider != nil:
		return nil, errors.New("memoryd: pass WithToken or WithTokenProvider, not both")
	case s.token != "":
		dial = append(dial, grpc.WithPerRPCCredentials(bearer(s.token)))
	case s.tokenProvider != nil:
		dial = append(dial, grpc.WithPerRPCCredentials(s.tokenProvider))
	}
	conn, err := grpc.NewClient(target, append(dial, s.dialOptions...)...)
	if err != nil {
		return nil, err
	}
	return &Client{
		renewsTokens: s.tokenProvider != nil,
		Conn:         conn,
		Memory:       memorydv1.NewMemoryServiceClient(conn),
		Metadata:     memorydv1.NewMetadataServiceClient(conn),
		Events:       memorydv1.NewEventServiceClient(conn),
		Vectors:      memorydv1.NewVectorServiceClient(conn),
		Summaries:    memorydv1.NewSummaryServiceClient(conn),
		Entries:      memorydv1.NewEntryServiceClient(conn),
	}, nil
}

// Close closes the connection.
func (c *Client) Close() error { return c.Conn.Close() }

// bearer is the token as per-call credentials.
type bearer string

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + string(b)}, nil
}

// RequireTransportSecurity is false: loopback servers run without TLS. Use
// WithTLS for anything else, or the token travels in plaintext.
func (bearer) RequireTransportSecurity() bool { return false }

// GetRequestMetadata asks the provider for the call's token.
func (p TokenProvider) GetRequestMetadata(ctx context.Context, _ ...string) (map[string]string, error) {
	token, err := p(ctx)
	if err != nil {
		return nil, err
	}
	return map[string]string{"authorization": "Bearer " + token}, nil
}

// RequireTransportSecurity is false, as for WithToken.
func (TokenProvider) RequireTransportSecurity() bool { return false }

func defaultDeadline(timeout time.Duration) grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if _, ok := ctx.Deadline(); !ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, timeout)
			defer cancel()
		}
		return invoker(ctx, method, req, reply, cc, opts...)
	}
}

// idempotencyKeys gives every append (SaveMessage, SaveMessages) without an
// idempotency key a fresh one, once per call: gRPC's retries happen below the
// interceptor, so every attempt carries the same key and the server stores
// the message once. The caller's request is left as it was.
func idempotencyKeys(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	switch r := req.(type) {
	case *memorydv1.SaveMessageRequest:
		if r.GetIdempotencyKey() == "" {
			keyed := proto.CloneOf(r)
			keyed.IdempotencyKey = newKey()
			req = keyed
		}
	case *memorydv1.SaveMessagesRequest:
		if r.GetIdempotencyKey() == "" {
			keyed := proto.CloneOf(r)
			keyed.IdempotencyKey = newKey()
			req = keyed
		}
	}
	return invoker(ctx, method, req, reply, cc, opts...)
}

func newKey() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b)
}
