package engine

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"os"
	"sync"

	"github.com/lni/dragonboat/v4/logger"
)

// dragonboat logs every election, connection and snapshot at info level from many packages;
// an operator wants its warnings and errors only, in the process's own log (slog's default
// logger at the time of the call, so the CLI's handler and level apply). Its factory is
// process-wide and may be set once, hence the Once.
var quietLogs sync.Once

// Importing dragonboat redirects the standard library's log package into its own logger
// (capnslog's init), which would change every log.Printf of the process, and slog's default
// handler with it. Put it back as it was before; this init runs after capnslog's.
func init() {
	log.SetOutput(os.Stderr)
	log.SetFlags(log.LstdFlags)
	log.SetPrefix("")
}

func quietDragonboat() {
	quietLogs.Do(func() {
		logger.SetLoggerFactory(func(pkg string) logger.ILogger { return slogLogger{pkg: pkg} })
	})
}

// slogLogger passes dragonboat's warnings and errors to slog and drops the rest. Raft
// messages carry ids and indexes, never command payloads.
type slogLogger struct{ pkg string }

func (slogLogger) SetLevel(logger.LogLevel)      {}
func (slogLogger) Debugf(string, ...interface{}) {}
func (slogLogger) Infof(string, ...interface{})  {}

// Warningf: dragonboat's raft package logs every vote, election and proposal dropped for
// want of a leader as a warning; those are the normal course of Raft (OnLeaderChange reports
// leaders), so they go at debug level, and other packages' warnings at warn.
func (l slogLogger) Warningf(format string, args ...interface{}) {
	level := slog.LevelWarn
	if l.pkg == "raft" {
		level = slog.LevelDebug
	}
	l.log(level, format, args)
}

// Errorf: a peer that shut down leaves the transport unable to say goodbye on its TLS
// connections, which dragonboat logs as an error each time; it is the normal course of a
// restart, so at debug level.
func (l slogLogger) Errorf(format string, args ...interface{}) {
	level := slog.LevelError
	if l.pkg == "transport" && format == "failed to close the connection %v" {
		level = slog.LevelDebug
	}
	l.log(level, format, args)
}

// Panicf is dragonboat's "cannot go on" (a corrupt log, a failed fsync): it expects a panic.
func (l slogLogger) Panicf(format string, args ...interface{}) {
	l.log(slog.LevelError, format, args)
	panic(fmt.Sprintf(format, args...))
}

func (l slogLogger) log(level slog.Level, format string, args []interface{}) {
	lg := slog.Default()
	if !lg.Enabled(context.Background(), level) {
		return
	}
	lg.Log(context.Background(), level, fmt.Sprintf(format, args...), "component", "raft", "pkg", l.pkg)
}
