package main

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/memoryd/memoryd/clients/go/internal/memorydtest"
	"github.com/memoryd/memoryd/clients/go/memoryd"
	memorydv1 "github.com/memoryd/memoryd/clients/go/memoryd/v1"
)

func dial(t *testing.T) *memoryd.Client {
	t.Helper()
	client, err := memoryd.Dial(memorydtest.Start(t).Addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	return client
}

func TestScenario(t *testing.T) {
	client := dial(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	session := fmt.Sprintf("go-test-%d", time.Now().UnixNano())

	out, err := run(ctx, client, session)
	if err != nil {
		t.Fatal(err)
	}

	ids := func(ms []*memorydv1.Message) []string {
		var r []string
		for _, m := range ms {
			r = append(r, m.GetId())
		}
		return r
	}
	if got, want := ids(out.History), ids(out.Saved); !slices.Equal(got, want) {
		t.Fatalf("history ids = %v, want %v", got, want)
	}
	for i, m := range out.History {
		if m.GetContent() != out.Saved[i].GetContent() {
			t.Errorf("history[%d] = %q, want %q", i, m.GetContent(), out.Saved[i].GetContent())
		}
		if i > 0 && m.GetSeq() <= out.History[i-1].GetSeq() {
			t.Errorf("seq not increasing: %d after %d", m.GetSeq(), out.History[i-1].GetSeq())
		}
	}
	if out.DeletedCount != 1 {
		t.Errorf("deleted %d, want 1", out.DeletedCount)
	}
	gone := out.Saved[1]
	ev := out.Deletion
	if ev.GetType() != memorydv1.EventType_EVENT_TYPE_MESSAGES_DELETED || ev.GetSessionId() != session {
		t.Errorf("event = %v", ev)
	}
	if got := ev.GetMessagesDeleted().GetIds(); !slices.Equal(got, []string{gone.GetId()}) {
		t.Errorf("deleted ids = %v, want [%s]", got, gone.GetId())
	}
	if got := ev.GetMessagesDeleted().GetTimestamps(); !slices.Equal(got, []int64{gone.GetTimestamp()}) {
		t.Errorf("deleted timestamps = %v, want [%d]", got, gone.GetTimestamp())
	}
	if got, want := ids(out.HistoryAfter), []string{out.Saved[0].GetId(), out.Saved[2].GetId()}; !slices.Equal(got, want) {
		t.Errorf("history after delete = %v, want %v", got, want)
	}
	if out.Invalid.Code != codes.InvalidArgument || out.Invalid.FieldViolations[0].GetField() != "session_id" {
		t.Errorf("invalid request = %v", out.Invalid)
	}
}
