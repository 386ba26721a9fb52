package memoryd_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	"github.com/memoryd/memoryd/clients/go/internal/memorydtest"
	"github.com/memoryd/memoryd/clients/go/memoryd"
	memorydv1 "github.com/memoryd/memoryd/clients/go/memoryd/v1"
)

func dial(t *testing.T, addr string, opts ...memoryd.Option) *memoryd.Client {
	t.Helper()
	client, err := memoryd.Dial(addr, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	return client
}

func unique(prefix string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// fault asks the proxy to fail the call's first n attempts (header memoryd-test-fault etc.).
func fault(ctx context.Context, header, code string, n int) context.Context {
	return metadata.AppendToOutgoingContext(ctx, header, fmt.Sprintf("%s:%d:%s", code, n, unique("")))
}

func save(t *testing.T, ctx context.Context, client *memoryd.Client, session, content string) *memorydv1.SaveMessageResponse {
	t.Helper()
	resp, err := client.Memory.SaveMessage(ctx, &memorydv1.SaveMessageRequest{
		SessionId: session, Message: &memorydv1.Message{Role: "user", Content: content}})
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func historyLen(t *testing.T, client *memoryd.Client, session string) int {
	t.Helper()
	resp, err := client.Memory.GetHistory(context.Background(), &memorydv1.GetHistoryRequest{SessionId: session})
	if err != nil {
		t.Fatal(err)
	}
	return len(resp.GetMessages())
}

func TestInvalidArgumentCarriesTheGoogleRpcDetails(t *testing.T) {
	client := dial(t, memorydtest.Start(t).Addr)

	_, err := client.Memory.GetHistory(context.Background(), &memorydv1.GetHistoryRequest{SessionId: "", Limit: -1})

	e := memoryd.ErrorOf(fmt.Errorf("wrapped: %w", err))
	if e.Code != codes.InvalidArgument || e.Reason == "" {
		t.Fatalf("error = %v", e)
	}
	var fields []string
	for _, v := range e.FieldViolations {
		fields = append(fields, v.GetField())
	}
	slices.Sort(fields)
	if !slices.Equal(fields, []string{"limit", "session_id"}) {
		t.Errorf("violations = %v, want [limit session_id]", fields)
	}
}

func TestIdempotentCallsAreRetriedAndOthersAreNot(t *testing.T) {
	proxy := memorydtest.StartProxy(t, memorydtest.Start(t))
	client := dial(t, proxy.Addr)
	ctx := context.Background()
	session := unique("go-")

	save(t, fault(ctx, "memoryd-test-fault", "UNAVAILABLE", 2), client, session, "hi")
	_, err := client.Memory.ClearSession(fault(ctx, "memoryd-test-fault", "UNAVAILABLE", 1),
		&memorydv1.ClearSessionRequest{SessionId: session})

	if code := memoryd.ErrorOf(err).Code; code != codes.Unavailable {
		t.Errorf("ClearSession: %v, want Unavailable (not retried)", code)
	}
	if n := historyLen(t, client, session); n != 1 {
		t.Errorf("history has %d messages, want 1", n)
	}
}

func TestAnEmptyServiceConfigTurnsRetriesOff(t *testing.T) {
	proxy := memorydtest.StartProxy(t, memorydtest.Start(t))
	client := dial(t, proxy.Addr, memoryd.WithServiceConfig(""))
	session := unique("go-")

	_, err := client.Memory.SaveMessage(fault(context.Background(), "memoryd-test-fault", "UNAVAILABLE", 1),
		&memorydv1.SaveMessageRequest{SessionId: session, Message: &memorydv1.Message{Role: "user", Content: "hi"}})

	if code := memoryd.ErrorOf(err).Code; code != codes.Unavailable {
		t.Errorf("SaveMessage: %v, want Unavailable (retries off)", code)
	}
	if n := historyLen(t, client, session); n != 0 {
		t.Errorf("history has %d messages, want 0", n)
	}
}

func TestARetryAfterALostAcknowledgementStoresOnce(t *testing.T) {
	proxy := memorydtest.StartProxy(t, memorydtest.Start(t))
	client := dial(t, proxy.Addr)
	session := unique("go-")

	// No idempotency key in the request: the client adds one, the same on both attempts.
	resp := save(t, fault(context.Background(), "memoryd-test-lost-ack", "UNAVAILABLE", 1), client, session, "once")

	if !resp.GetDeduplicated() {
		t.Error("the retry was not recognised as one")
	}
	if n := historyLen(t, client, session); n != 1 {
		t.Errorf("history has %d messages, want 1", n)
	}
}

func TestUnaryCallsGetTheDefaultDeadlineButWatchDoesNot(t *testing.T) {
	server := memorydtest.Start(t)
	hurried := dial(t, server.Addr, memoryd.WithTimeout(time.Nanosecond))
	patient := dial(t, server.Addr)
	session := unique("go-")

	_, err := hurried.Memory.GetHistory(context.Background(), &memorydv1.GetHistoryRequest{SessionId: session})
	if code := memoryd.ErrorOf(err).Code; code != codes.DeadlineExceeded {
		t.Fatalf("GetHistory: %v, want DeadlineExceeded", code)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	watch := hurried.Watch(ctx, &memorydv1.WatchRequest{SessionIds: []string{session}})
	defer watch.Close()
	if err := watch.Started(); err != nil {
		t.Fatal(err)
	}
	save(t, ctx, patient, session, "hi")
	event, err := watch.Next()
	if err != nil || event.GetType() != memorydv1.EventType_EVENT_TYPE_MESSAGES_APPENDED {
		t.Fatalf("Next = %v, %v", event, err)
	}
}

func TestWatchResumesFromItsLastSeq(t *testing.T) {
	proxy := memorydtest.StartProxy(t, memorydtest.Start(t))
	client := dial(t, proxy.Addr)
	session := unique("go-")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	watch := client.Watch(fault(ctx, "memoryd-test-cut", "UNAVAILABLE", 2), &memorydv1.WatchRequest{
		SessionIds: []string{session},
		Types:      []memorydv1.EventType{memorydv1.EventType_EVENT_TYPE_MESSAGES_APPENDED}})
	defer watch.Close()
	if err := watch.Started(); err != nil {
		t.Fatal(err)
	}
	var saved, received []string
	for i := range 4 {
		saved = append(saved, save(t, ctx, client, session, fmt.Sprintf("m%d", i)).GetMessage().GetId())
	}
	var last int64
	for range saved {
		event, err := watch.Next()
		if err != nil {
			t.Fatal(err)
		}
		if event.GetSeq() <= last {
			t.Errorf("seq %d after %d", event.GetSeq(), last)
		}
		last = event.GetSeq()
		received = append(received, event.GetMessagesAppended().GetMessages()[0].GetId())
	}

	if !slices.Equal(received, saved) {
		t.Errorf("received %v, want %v (each once, in order)", received, saved)
	}
	if n := watch.Reconnects(); n != 1 {
		t.Errorf("reconnects = %d, want 1", n)
	}
	if seq, ok := watch.LastSeq(); !ok || seq != last {
		t.Errorf("LastSeq = %d, %v; want %d", seq, ok, last)
	}
}

func TestTheBearerTokenSelectsTheTenant(t *testing.T) {
	server := memorydtest.Start(t, "MEMORYD_TOKENS=acme: token-acme-0123456789")
	acme := dial(t, server.Addr, memoryd.WithToken("token-acme-0123456789"))
	anonymous := dial(t, server.Addr)
	session := unique("go-")

	save(t, context.Background(), acme, session, "hi")

	if n := historyLen(t, acme, session); n != 1 {
		t.Errorf("acme sees %d messages, want 1", n)
	}
	_, err := anonymous.Memory.GetHistory(context.Background(), &memorydv1.GetHistoryRequest{SessionId: session})
	if code := memoryd.ErrorOf(err).Code; code != codes.Unauthenticated {
		t.Errorf("without a token: %v, want Unauthenticated", code)
	}
}

// jwtServer is memoryd verifying JWTs of the test issuer (no leeway), and a
// provider minting tokens of tenant that live lifetime, counting its calls.
func jwtServer(t *testing.T, tenant string, lifetime int) (*memorydtest.Server, memoryd.TokenProvider, *atomic.Int32, *atomic.Bool) {
	t.Helper()
	issuer := memorydtest.StartIssuer(t)
	server := memorydtest.Start(t, "MEMORYD_OIDC_ISSUER=http://"+issuer.Addr, "MEMORYD_JWT_AUDIENCE=memoryd-test",
		"MEMORYD_JWT_LEEWAY_SECONDS=0")
	calls, broken := &atomic.Int32{}, &atomic.Bool{}
	provider := func(ctx context.Context) (string, error) {
		calls.Add(1)
		if broken.Load() {
			return "not.a.token", nil
		}
		url := fmt.Sprintf("http://%s/mint?tenant=%s&lifetime=%d", issuer.Addr, tenant, lifetime)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return "", err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		token, err := io.ReadAll(resp.Body)
		return string(token), err
	}
	return server, provider, calls, broken
}

func TestTheTokenProviderGivesEveryCallItsToken(t *testing.T) {
	server, provider, calls, broken := jwtServer(t, unique("t-"), 600)
	client := dial(t, server.Addr, memoryd.WithTokenProvider(provider))
	session := unique("go-")
	save(t, context.Background(), client, session, "hi")
	if n := historyLen(t, client, session); n != 1 || calls.Load() != 2 {
		t.Fatalf("history %d, provider called %d times; want 1 and 2", n, calls.Load())
	}
	broken.Store(true) // the server sees the provider's token, call by call
	_, err := client.Memory.GetHistory(context.Background(), &memorydv1.GetHistoryRequest{SessionId: session})
	if e := memoryd.ErrorOf(err); e.Code != codes.Unauthenticated || e.Reason != "TOKEN_INVALID" {
		t.Fatalf("a junk token: %v %q, want Unauthenticated TOKEN_INVALID", e.Code, e.Reason)
	}
	broken.Store(false)
	if n := historyLen(t, client, session); n != 1 {
		t.Fatalf("history %d after the provider recovered, want 1", n)
	}
	if _, err := memoryd.Dial(server.Addr, memoryd.WithToken("x"), memoryd.WithTokenProvider(provider)); err == nil {
		t.Fatal("Dial took both a token and a token provider")
	}
}

func TestAWatchResumesWithAFreshTokenWhenItsTokenExpires(t *testing.T) {
	server, provider, _, _ := jwtServer(t, unique("t-"), 2)
	client := dial(t, server.Addr, memoryd.WithTokenProvider(provider))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	watch := client.Watch(ctx, &memorydv1.WatchRequest{AfterSeq: proto.Int64(0)})
	defer watch.Close()
	if err := watch.Started(); err != nil {
		t.Fatal(err)
	}
	var seqs []int64
	for i := range 3 { // each save after the previous token expired: the stream ends and resumes
		save(t, ctx, client, "w", fmt.Sprintf("m%d", i))
		event, err := watch.Next()
		if err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, event.GetMessagesAppended().GetMessages()[0].GetSeq())
		time.Sleep(2500 * time.Millisecond)
	}
	if !slices.Equal(seqs, []int64{1, 2, 3}) || watch.Reconnects() < 1 {
		t.Fatalf("seqs %v after %d reconnects; want [1 2 3] and a reconnect", seqs, watch.Reconnects())
	}
}
