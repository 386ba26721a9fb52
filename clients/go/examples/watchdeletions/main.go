// Command watchdeletions saves a few messages, reads the history, and watches
// for deletions while deleting one.
//
//	go run ./examples/watchdeletions -addr 127.0.0.1:50051 [-token T] [-ca ca.pem]
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/memoryd/memoryd/clients/go/memoryd"
	memorydv1 "github.com/memoryd/memoryd/clients/go/memoryd/v1"
)

// outcome is what the scenario observed.
type outcome struct {
	Saved        []*memorydv1.Message
	History      []*memorydv1.Message
	DeletedCount int64
	Deletion     *memorydv1.Event
	HistoryAfter []*memorydv1.Message
	Invalid      *memoryd.Error
}

func run(ctx context.Context, client *memoryd.Client, sessionID string) (*outcome, error) {
	out := &outcome{}
	for _, m := range []struct{ role, content string }{
		{"user", "What is the capital of France?"},
		{"assistant", "Paris."},
		{"user", "And of Italy?"},
	} {
		saved, err := client.Memory.SaveMessage(ctx, &memorydv1.SaveMessageRequest{
			SessionId: sessionID,
			Message:   &memorydv1.Message{Role: m.role, Content: m.content},
		})
		if err != nil {
			return nil, fmt.Errorf("save: %w", err)
		}
		out.Saved = append(out.Saved, saved.GetMessage())
	}

	history, err := client.Memory.GetHistory(ctx, &memorydv1.GetHistoryRequest{SessionId: sessionID})
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	out.History = history.GetMessages()

	watch := client.Watch(ctx, &memorydv1.WatchRequest{
		SessionIds: []string{sessionID},
		Types:      []memorydv1.EventType{memorydv1.EventType_EVENT_TYPE_MESSAGES_DELETED},
	})
	defer watch.Close()
	if err := watch.Started(); err != nil { // registered: the deletion cannot slip in first
		return nil, fmt.Errorf("watch: %w", err)
	}
	deleted, err := client.Memory.DeleteMessages(ctx, &memorydv1.DeleteMessagesRequest{
		SessionId: sessionID,
		Ids:       []string{out.Saved[1].GetId()},
	})
	if err != nil {
		return nil, fmt.Errorf("delete: %w", err)
	}
	out.DeletedCount = deleted.GetDeletedCount()
	if out.Deletion, err = watch.Next(); err != nil {
		return nil, fmt.Errorf("watch: %w", err)
	}

	after, err := client.Memory.GetHistory(ctx, &memorydv1.GetHistoryRequest{SessionId: sessionID})
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	out.HistoryAfter = after.GetMessages()

	_, err = client.Memory.GetHistory(ctx, &memorydv1.GetHistoryRequest{SessionId: ""})
	out.Invalid = memoryd.ErrorOf(err) // INVALID_ARGUMENT, FieldViolations naming session_id
	return out, nil
}

// trusting is a TLS config that trusts the certificates in the PEM file at path.
func trusting(path string) *tls.Config {
	pem, err := os.ReadFile(path)
	if err != nil {
		log.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		log.Fatal("no certificate in ", path)
	}
	return &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
}

func main() {
	addr := flag.String("addr", "127.0.0.1:50051", "memoryd address")
	token := flag.String("token", "", "bearer token (optional)")
	ca := flag.String("ca", "", "PEM CA bundle: connect over TLS (optional)")
	session := flag.String("session", fmt.Sprintf("example-%d", time.Now().UnixNano()), "session id")
	flag.Parse()

	options := []memoryd.Option{memoryd.WithToken(*token)}
	if *ca != "" { // a CA bundle: connect over TLS
		options = append(options, memoryd.WithTLS(trusting(*ca)))
	}
	client, err := memoryd.Dial(*addr, options...)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := run(ctx, client, *session)
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
	fmt.Printf("invalid request: %v %s %s\n", out.Invalid.Code, out.Invalid.Reason, out.Invalid.FieldViolations[0].GetField())
}
