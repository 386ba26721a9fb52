// Command watchdeletions saves a few messages, reads the history, and watches
// for deletions while deleting one.
//
//	go run ./examples/watchdeletions -addr 127.0.0.1:50051
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	memorydv1 "github.com/memoryd/memoryd/clients/go/memoryd/v1"
)

// outcome is what the scenario observed.
type outcome struct {
	Saved        []*memorydv1.Message
	History      []*memorydv1.Message
	DeletedCount int64
	Deletion     *memorydv1.Event
	HistoryAfter []*memorydv1.Message
}

func run(ctx context.Context, conn *grpc.ClientConn, sessionID string) (*outcome, error) {
	memory := memorydv1.NewMemoryServiceClient(conn)
	events := memorydv1.NewEventServiceClient(conn)
	out := &outcome{}

	for _, m := range []struct{ role, content string }{
		{"user", "What is the capital of France?"},
		{"assistant", "Paris."},
		{"user", "And of Italy?"},
	} {
		resp, err := memory.SaveMessage(ctx, &memorydv1.SaveMessageRequest{
			SessionId: sessionID,
			Message:   &memorydv1.Message{Role: m.role, Content: m.content},
		})
		if err != nil {
			return nil, fmt.Errorf("save: %w", err)
		}
		out.Saved = append(out.Saved, resp.GetMessage())
	}

	history, err := memory.GetHistory(ctx, &memorydv1.GetHistoryRequest{SessionId: sessionID})
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	out.History = history.GetMessages()

	// Watch from now. The server sends the response headers once the watch is
	// registered, so waiting for them means the deletion cannot slip in first.
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	stream, err := events.Watch(watchCtx, &memorydv1.WatchRequest{
		SessionIds: []string{sessionID},
		Types:      []memorydv1.EventType{memorydv1.EventType_EVENT_TYPE_MESSAGES_DELETED},
	})
	if err != nil {
		return nil, fmt.Errorf("watch: %w", err)
	}
	if _, err := stream.Header(); err != nil {
		return nil, fmt.Errorf("watch: %w", err)
	}

	deleted, err := memory.DeleteMessages(ctx, &memorydv1.DeleteMessagesRequest{
		SessionId: sessionID,
		Ids:       []string{out.Saved[1].GetId()},
	})
	if err != nil {
		return nil, fmt.Errorf("delete: %w", err)
	}
	out.DeletedCount = deleted.GetDeletedCount()

	for out.Deletion == nil {
		resp, err := stream.Recv()
		if err != nil {
			return nil, fmt.Errorf("watch: %w", err)
		}
		out.Deletion = resp.GetEvent() // nil for progress notifications
	}

	after, err := memory.GetHistory(ctx, &memorydv1.GetHistoryRequest{SessionId: sessionID})
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	out.HistoryAfter = after.GetMessages()
	return out, nil
}

func main() {
	addr := flag.String("addr", "127.0.0.1:50051", "memoryd address")
	token := flag.String("token", "", "bearer token (optional)")
	session := flag.String("session", fmt.Sprintf("example-%d", time.Now().UnixNano()), "session id")
	flag.Parse()

	conn, err := grpc.NewClient(*addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if *token != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+*token)
	}
	out, err := run(ctx, conn, *session)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			log.Fatal("timed out: is memoryd running at ", *addr, "?")
		}
		log.Fatal(err)
	}
	fmt.Printf("session %s\n", *session)
	for _, m := range out.History {
		fmt.Printf("  #%d %s: %s\n", m.GetSeq(), m.GetRole(), m.GetContent())
	}
	d := out.Deletion.GetMessagesDeleted()
	fmt.Printf("deleted %d; event seq %d: ids %v\n", out.DeletedCount, out.Deletion.GetSeq(), d.GetIds())
	var contents []string
	for _, m := range out.HistoryAfter {
		contents = append(contents, m.GetContent())
	}
	fmt.Printf("history now: %q\n", contents)
}
