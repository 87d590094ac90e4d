package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"okstream/checkpoint"
	"okstream/consumer"
	"okstream/internal/kafkasec"
	"okstream/internal/kafkautil"
	"okstream/modelfile"
	"okstream/serve"
)

func init() {
	register(command{name: "serve", summary: "answer prediction requests over HTTP with a pipeline's models (a replica following its checkpoints, or a model file)", run: runServe})
}

const serveSynopsis = `serve (--brokers HOST:PORT --input TOPIC [--group GROUP] | --model FILE) [flags]

Answers POST /v1/predict: a batch of events in the input topic's schema, as
JSON (an array, or {"events": [...]}) or msgpack (Content-Type
application/msgpack), with one prediction record per event in the output
topic's schema (every model's score, decision, probability, class), as
{"predictions": [...]} in the request's format. Also GET /v1/models,
/healthz, /readyz (503 until a model is loaded, or when a model is older
than --max-age) and /metrics. docs/serving.md has the details.

Sources of the models:
  --brokers/--input  a read-only replica: serves each input partition's
                     newest checkpoint of the pipeline (--group,
                     --checkpoint-topic) and follows the checkpoint topic,
                     swapping models in as new checkpoints land (--poll)
  --model FILE       a model file (okstream model export, okstream eval --save)
(okstream run --serve ADDR serves a pipeline's live models in its own
process.)

Routing: ?partition=N picks a partition's model; otherwise an event's "key"
picks the partition the input topic's producers send that key to (murmur2,
as okstream replay and Java clients do); a server with one model answers
every event with it. ?model=NAME[,NAME] restricts the answer to some models.

Security: binds 127.0.0.1 by default. To expose it, give --http-tls-cert and
--http-tls-key (HTTPS) and --token-file (clients send Authorization: Bearer
TOKEN), or put it behind a proxy that does both.`

const serveExamples = `  okstream serve --brokers localhost:9092 --input events --group okstream
  okstream serve --model model.okm --addr 127.0.0.1:8090
  curl -s localhost:8090/v1/predict -H 'Content-Type: application/json' -d '[{"v":1,"key":"user-7","x":[0.1,0.2,0.3]}]'
  okstream serve --model model.okm --addr :8443 --http-tls-cert srv.pem --http-tls-key srv.key --token-file tokens`

// httpFlags are the HTTP server's flags, shared by okstream serve and
// okstream run --serve (with the prefix "serve-" there).
type httpFlags struct {
	prefix                string
	certFile, keyFile     string
	tokenFile             string
	maxBody               int64
	maxBatch, maxInFlight int
	maxAge                time.Duration
}

func (h *httpFlags) register(fs *flag.FlagSet, prefix string) {
	h.prefix = prefix
	tls := "http-tls-"
	if prefix != "" {
		tls = prefix + "tls-"
	}
	fs.StringVar(&h.certFile, tls+"cert", "", "PEM certificate (chain) of the prediction server: serve HTTPS (with --"+tls+"key)")
	fs.StringVar(&h.keyFile, tls+"key", "", "PEM private key of --"+tls+"cert")
	fs.StringVar(&h.tokenFile, prefix+"token-file", "", "file of bearer tokens, one a line (at least 16 bytes each; several: a rotation): /v1/ requests must send Authorization: Bearer TOKEN (default: no authentication)")
	fs.Int64Var(&h.maxBody, prefix+"max-body-bytes", serve.DefaultMaxBodyBytes, "bound on a request's body (413 beyond)")
	fs.IntVar(&h.maxBatch, prefix+"max-batch", serve.DefaultMaxBatch, "bound on a request's events (413 beyond)")
	fs.IntVar(&h.maxInFlight, prefix+"max-in-flight", 0, "requests decoded and scored at once; the others wait (0: 4 × the CPUs)")
	fs.DurationVar(&h.maxAge, prefix+"max-age", 0, "/readyz answers 503 when a served model is older than this (its checkpoint's write time; 0: no limit); set it above --checkpoint-interval")
}

// server builds the prediction server and its listener on addr, refusing
// bad flags with a message that says how to fix them.
func (h *httpFlags) server(addr string, o serve.Options, log *slog.Logger) (*serve.Server, net.Listener, error) {
	flag := func(name string) string { return "--" + h.prefix + name }
	tlsFlag := func(name string) string {
		if h.prefix == "" {
			return "--http-tls-" + name
		}
		return "--" + h.prefix + "tls-" + name
	}
	if h.maxBody < 1 {
		return nil, nil, fmt.Errorf("%s %d: give a positive number of bytes", flag("max-body-bytes"), h.maxBody)
	}
	if h.maxBatch < 1 {
		return nil, nil, fmt.Errorf("%s %d: give a positive number of events", flag("max-batch"), h.maxBatch)
	}
	if h.maxInFlight < 0 {
		return nil, nil, fmt.Errorf("%s %d: give a positive number, or 0 for 4 × the CPUs", flag("max-in-flight"), h.maxInFlight)
	}
	if h.maxAge < 0 {
		return nil, nil, fmt.Errorf("%s %s: give a positive duration, or 0 for no limit", flag("max-age"), h.maxAge)
	}
	if (h.certFile == "") != (h.keyFile == "") {
		return nil, nil, fmt.Errorf("%s and %s go together (HTTPS needs both)", tlsFlag("cert"), tlsFlag("key"))
	}
	o.MaxBodyBytes, o.MaxBatch, o.MaxInFlight, o.MaxAge, o.Logger = h.maxBody, h.maxBatch, h.maxInFlight, h.maxAge, log
	if h.tokenFile != "" {
		toks, err := readTokens(h.tokenFile)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %v", flag("token-file"), err)
		}
		o.Tokens = toks
	}
	srv, err := serve.New(o)
	if err != nil {
		return nil, nil, err
	}
	var tcfg *tls.Config
	if h.certFile != "" {
		cert, err := tls.LoadX509KeyPair(h.certFile, h.keyFile)
		if err != nil {
			return nil, nil, fmt.Errorf("%s/%s: %v", tlsFlag("cert"), tlsFlag("key"), err)
		}
		tcfg = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, fmt.Errorf("listening on %s: %v (choose another address)", addr, err)
	}
	if tcfg != nil {
		ln = tls.NewListener(ln, tcfg)
	}
	if !loopback(ln.Addr()) && (tcfg == nil || len(o.Tokens) == 0) {
		log.Warn("the prediction server listens beyond loopback without HTTPS and a bearer token: anyone who reaches it can query the models; give "+tlsFlag("cert")+"/"+tlsFlag("key")+" and "+flag("token-file")+", or put it behind a proxy that does both", "addr", ln.Addr().String())
	}
	return srv, ln, nil
}

// loopback reports whether a listener's address is a loopback one.
func loopback(a net.Addr) bool {
	ta, ok := a.(*net.TCPAddr)
	return ok && ta.IP.IsLoopback()
}

// readTokens reads a token file: one token a line, blank lines ignored.
func readTokens(path string) ([][]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if t := bytes.TrimSpace(sc.Bytes()); len(t) > 0 {
			out = append(out, bytes.Clone(t))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, errors.New("no token in the file (one a line; make one with: head -c 32 /dev/urandom | base64)")
	}
	return out, nil
}

// httpServe serves srv on ln until ctx ends, then shuts down (5 s for the
// requests in flight); the server's connection errors go to log at debug
// level.
func httpServe(ctx context.Context, srv *serve.Server, ln net.Listener, log *slog.Logger) error {
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute,
		WriteTimeout: time.Minute, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug)} // TLS handshake and connection errors
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		hs.Shutdown(sctx)
		return nil
	}
}

func runServe(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return runServeContext(ctx, args, stdout, stderr, nil)
}

// runServeContext is okstream serve until ctx ends; ready, when not nil,
// gets the listener's address once it listens (tests).
func runServeContext(ctx context.Context, args []string, stdout, stderr io.Writer, ready func(addr string)) int {
	fs := newFlagSet("serve", serveSynopsis, serveExamples, stderr)
	d := consumer.NewConfig()
	addr := fs.String("addr", "127.0.0.1:8090", "address of the prediction server (loopback only by default; :8090 listens on every interface: see --token-file and --http-tls-cert)")
	brokers := fs.String("brokers", "", "replica: Kafka bootstrap brokers of the pipeline (or OKSTREAM_BROKERS)")
	input := fs.String("input", "", "replica: the pipeline's input topic (okstream run --input)")
	group := fs.String("group", d.Group, "replica: the pipeline's consumer group (okstream run --group)")
	ckptTopic := fs.String("checkpoint-topic", d.Checkpoints, "replica: the pipeline's checkpoint topic")
	poll := fs.Duration("poll", 5*time.Second, "replica: how often to look for new checkpoints")
	model := fs.String("model", "", "serve the models of this model file (okstream model export, okstream eval --save) instead of following a pipeline")
	maxFile := fs.Int64("max-file-bytes", 1<<30, "bound on the model file's size")
	topK := fs.Int("top-k", consumer.DefaultTopK, "multi-class models: the classes each answer lists with their probabilities, most probable first; 0: all (as okstream run --top-k)")
	positive := fs.String("positive", "", "binary streams with string labels: the positive class, which names the answers' class (as okstream run --positive)")
	maxEventBytes := fs.Int("max-event-bytes", d.MaxEventBytes, "larger events are refused (400)")
	maxAbs := fs.Float64("max-abs-value", consumer.DefaultMaxAbsValue, "events with a feature value or label of larger magnitude are refused (400), as okstream run dead-letters them; 0: off")
	maxID := fs.Int("max-id-bytes", consumer.DefaultMaxIDBytes, "events whose id, key or ref is longer are refused (400); 0: off")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn, error")
	var hf httpFlags
	hf.register(fs, "")
	var sf secFlags
	sf.register(fs)
	if code, done := parseFlags(fs, args, stdout); done {
		return code
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "okstream serve: "+format+"\n", a...)
		return 2
	}
	log, err := newLogger(*logLevel, "text", stderr)
	if err != nil {
		return fail("%v", err)
	}
	replica := *brokers != "" || *input != ""
	switch {
	case *model != "" && replica:
		return fail("--model and --brokers/--input are two sources: serve a model file, or follow a pipeline's checkpoints, not both")
	case *model == "" && !replica && os.Getenv("OKSTREAM_BROKERS") == "":
		return fail("say where the models come from: --model FILE, or --brokers and --input of a pipeline (see okstream serve --help)")
	case *model == "" && *input == "":
		return fail("--input is required with --brokers: the pipeline's input topic (its checkpoints are keyed by it)")
	case *poll <= 0:
		return fail("--poll %s: give a positive duration", *poll)
	case *topK < 0:
		return fail("--top-k %d: give a number of classes, or 0 for all", *topK)
	}
	if *topK == 0 {
		*topK = -1 // consumer.ScorerOptions: negative lists every class
	}
	sopts := consumer.ScorerOptions{TopK: *topK, Positive: *positive}
	o := serve.Options{MaxEventBytes: *maxEventBytes, MaxAbsValue: offIfZero(*maxAbs), MaxIDBytes: int(offIfZero(float64(*maxID)))}
	srv, ln, err := hf.server(*addr, o, log)
	if err != nil {
		return fail("%v", err)
	}
	defer ln.Close()
	if *model != "" {
		fi, err := os.Stat(*model)
		if err != nil {
			return fail("--model: %v", err)
		}
		fh, err := os.Open(*model)
		if err != nil {
			return fail("--model: %v", err)
		}
		f, err := modelfile.Read(fh, modelfile.Limits{MaxBytes: *maxFile})
		fh.Close()
		if err != nil {
			return fail("--model %s: %v", *model, err)
		}
		if err := serve.LoadFile(srv, f, fi.ModTime(), sopts); err != nil {
			return fail("--model %s: %v", *model, err)
		}
		log.Info("serving a model file", "file", *model, "entries", len(f.Entries), "from", f.Header.From)
	} else {
		conn, err := sf.connect(fs, *brokers, "serve", stderr)
		if err != nil {
			return fail("%v", err)
		}
		defer conn.close()
		octx, cancel := context.WithTimeout(ctx, time.Minute)
		parts, err := kafkautil.Partitions(octx, conn.client, *input)
		if err != nil {
			cancel()
			return fail("input topic %s: %v (check --input: the topic okstream run reads)", *input, kafkasec.Explain(err))
		}
		store, err := checkpoint.OpenExisting(octx, checkpoint.Config{Brokers: conn.brokers, Topic: *ckptTopic, Client: conn.client})
		cancel()
		if err != nil {
			return fail("checkpoint topic: %v (check --checkpoint-topic)", kafkasec.Explain(err))
		}
		defer store.Close()
		log.Info("replica: following checkpoints", "group", *group, "input", *input, "partitions", parts, "checkpoint_topic", *ckptTopic, "poll", poll.String())
		go serve.Follow(ctx, srv, serve.FollowConfig{Store: store, Client: conn.client, Group: *group, Input: *input, CheckpointTopic: *ckptTopic, Poll: *poll, Scorer: sopts})
	}
	log.Info("prediction server", "addr", ln.Addr().String(), "https", hf.certFile != "", "tokens", hf.tokenFile != "")
	if ready != nil {
		ready(ln.Addr().String())
	}
	if err := httpServe(ctx, srv, ln, log); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(stderr, "okstream serve: %v\n", err)
		return 1
	}
	return 0
}

// runServeFlags are okstream run's --serve flags.
type runServeFlags struct {
	addr string
	http httpFlags
}

func (r *runServeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&r.addr, "serve", "", "serve the live models over HTTP on this address (POST /v1/predict, as okstream serve; loopback only unless given, e.g. 127.0.0.1:8090): each partition's models as of its last checkpoint (empty: off)")
	r.http.register(fs, "serve-")
}

// attach sets up okstream run --serve: the prediction server listens on
// its address, and cfg.OnModels hands each partition's checkpoints to it.
// It returns the function that starts serving (after the pipeline is
// built) until ctx ends; nothing when --serve is not given.
func (r *runServeFlags) attach(cfg *consumer.Config, log *slog.Logger) (func(ctx context.Context), error) {
	if r.addr == "" {
		return func(context.Context) {}, nil
	}
	o := serve.Options{MaxEventBytes: cfg.MaxEventBytes, MaxAbsValue: cfg.MaxAbsValue, MaxIDBytes: cfg.MaxIDBytes}
	srv, ln, err := r.http.server(r.addr, o, log)
	if err != nil {
		return nil, fmt.Errorf("--serve: %w", err)
	}
	tr := kafkasec.Transport(cfg.TLS, cfg.SASL)
	live := serve.NewLive(srv, serve.LiveConfig{Topic: cfg.Input, Group: cfg.Group, Scorer: consumer.ScorerOptions{TopK: cfg.TopK, Positive: cfg.Positive},
		Client: kafkasec.Client(cfg.Brokers, tr, 30*time.Second)}) // the input's partition count, for routing keys
	cfg.OnModels = live.Publish
	return func(ctx context.Context) {
		go func() {
			live.Run(ctx)
			kafkasec.CloseTransport(tr)
		}()
		go func() {
			if err := httpServe(ctx, srv, ln, log); err != nil && !errors.Is(err, http.ErrServerClosed) {
				log.Error("prediction server stopped", "err", err)
			}
		}()
		log.Info("serving the live models", "addr", ln.Addr().String(), "https", r.http.certFile != "", "tokens", r.http.tokenFile != "")
	}, nil
}
