package main

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/genproto/googleapis/rpc/errdetails"

	"github.com/memoryd/memoryd/clients/go/internal/memorydtest"
	memorydv1 "github.com/memoryd/memoryd/clients/go/memoryd/v1"
)

func dial(t *testing.T) *grpc.ClientConn {
	t.Helper()
	server := memorydtest.Start(t)
	conn, err := grpc.NewClient(server.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func TestScenario(t *testing.T) {
	conn := dial(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	session := fmt.Sprintf("go-test-%d", time.Now().UnixNano())

	out, err := run(ctx, conn, session)
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
}

func TestInvalidArgumentCarriesBadRequest(t *testing.T) {
	conn := dial(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	_, err := memorydv1.NewMemoryServiceClient(conn).GetHistory(ctx, &memorydv1.GetHistoryRequest{SessionId: "", Limit: -1})

	st := status.Convert(err)
	if st.Code() != codes.InvalidArgument {
		t.Fatalf("code = %v, want InvalidArgument", st.Code())
	}
	var fields []string
	for _, d := range st.Details() {
		if br, ok := d.(*errdetails.BadRequest); ok {
			for _, v := range br.GetFieldViolations() {
				fields = append(fields, v.GetField())
			}
		}
	}
	slices.Sort(fields)
	if !slices.Equal(fields, []string{"limit", "session_id"}) {
		t.Errorf("violations = %v, want [limit session_id]", fields)
	}
}
