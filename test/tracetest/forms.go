package tracetest

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Entry is one line a container wrote, without its newline.
type Entry struct {
	Line      []byte
	Stream    string // stdout or stderr
	Time      time.Time
	Node      string
	Namespace string
	Pod       string
	Container string
	ID        string // the container's id, 64 hex digits
}

// Form writes entries as one log path holds them, following the source
// cited beside it (docs/trace.md has the table).
type Form struct {
	Name  string
	Write func([]Entry) []byte
}

// Forms are the log paths with no writer that runs on a test machine.
var Forms = []Form{
	{"cri-containerd", func(es []Entry) []byte { return cri(es, 16<<10) }},
	{"cri-o", func(es []Entry) []byte { return cri(es, 8<<10) }},
	{"kubectl-timestamps", kubectlTimestamps},
	{"kubectl-prefix", kubectlPrefix},
	{"docker-json-file", dockerJSONFile},
	{"docker-local", dockerLocal},
	{"journal-export", JournalExport},
	{"journalctl-json", func(es []Entry) []byte { return journalctlJSON(es, false) }},
	{"journalctl-json-all", func(es []Entry) []byte { return journalctlJSON(es, true) }},
	{"journalctl-cat", journalctlCat},
	{"vector-file", vectorFile},
	{"fluentd-out_file", fluentdOutFile},
	{"gcloud-logging-read", gcloudLoggingRead},
	{"cloud-storage-sink", cloudStorageSink},
	{"cloudwatch-filter-log-events", cloudwatch},
	{"splunk-export", splunkExport},
	{"datadog-archive", datadogArchive},
	{"otel-file-exporter", otelFileExporter},
	{"loki-query-range", lokiQueryRange},
	{"loki-logcli-jsonl", lokiJSONL},
}

func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// parts splits a line as a runtime writing at most n bytes a record does.
func parts(line []byte, n int) [][]byte {
	var out [][]byte
	for len(line) > n {
		out = append(out, line[:n])
		line = line[n:]
	}
	return append(out, line)
}

// cri is the CRI log format the kubelet reads from /var/log/pods:
// "TIME STREAM TAG CONTENT", TAG P for a part of a longer line and F for
// its last part (containerd internal/cri/io/logger.go, redirectLogs, with
// max_container_log_line_size 16384; CRI-O through conmon, 8192).
func cri(es []Entry, n int) []byte {
	var b bytes.Buffer
	for _, e := range es {
		ps := parts(e.Line, n)
		for i, p := range ps {
			tag := "P"
			if i == len(ps)-1 {
				tag = "F"
			}
			fmt.Fprintf(&b, "%s %s %s %s\n", rfc3339(e.Time), e.Stream, tag, p)
		}
	}
	return b.Bytes()
}

// kubectlTimestamps is kubectl logs --timestamps: the kubelet joins a
// line's parts and puts the time before it (pkg/kubelet/kuberuntime/logs,
// ReadLogs, with LogOptions.timestamp).
func kubectlTimestamps(es []Entry) []byte {
	var b bytes.Buffer
	for _, e := range es {
		fmt.Fprintf(&b, "%s %s\n", rfc3339(e.Time), e.Line)
	}
	return b.Bytes()
}

// kubectlPrefix is kubectl logs --prefix --timestamps over several pods:
// "[pod/NAME/CONTAINER] " before each line (kubectl's logs command,
// addPrefixIfNeeded).
func kubectlPrefix(es []Entry) []byte {
	var b bytes.Buffer
	for _, e := range es {
		fmt.Fprintf(&b, "[pod/%s/%s] %s %s\n", e.Pod, e.Container, rfc3339(e.Time), e.Line)
	}
	return b.Bytes()
}

// dockerJSONFile is Docker's json-file driver: {"log","stream","time"} a
// line, a line longer than the copier's 16 KiB buffer in parts whose log
// has no trailing newline (moby daemon/logger/copier.go, bufSize;
// jsonfilelog.go, marshalMessage).
func dockerJSONFile(es []Entry) []byte {
	var b bytes.Buffer
	for _, e := range es {
		ps := parts(e.Line, 16<<10)
		for i, p := range ps {
			log := string(p)
			if i == len(ps)-1 {
				log += "\n"
			}
			l, _ := json.Marshal(log)
			fmt.Fprintf(&b, `{"log":%s,"stream":%q,"time":%q}`+"\n", l, e.Stream, rfc3339(e.Time))
		}
	}
	return b.Bytes()
}

// dockerLocal is Docker's local driver: each entry a big-endian uint32
// size, a protobuf LogEntry and the size again; parts of a long line
// carry partial_log_metadata with their id, ordinal and whether last
// (moby daemon/logger/local/local.go, marshal; logdriver/entry.proto).
func dockerLocal(es []Entry) []byte {
	var b bytes.Buffer
	for n, e := range es {
		ps := parts(e.Line, 16<<10)
		for i, p := range ps {
			var m []byte
			m = field(m, 1, []byte(e.Stream))
			m = varintField(m, 2, uint64(e.Time.UnixNano()))
			m = field(m, 3, p)
			if len(ps) > 1 {
				m = varintField(m, 4, 1)
				var md []byte
				if i == len(ps)-1 {
					md = varintField(md, 1, 1)
				}
				md = field(md, 2, []byte(fmt.Sprintf("part-%d", n)))
				md = varintField(md, 3, uint64(i+1))
				m = field(m, 5, md)
			}
			binary.Write(&b, binary.BigEndian, uint32(len(m)))
			b.Write(m)
			binary.Write(&b, binary.BigEndian, uint32(len(m)))
		}
	}
	return b.Bytes()
}

func field(b []byte, num int, data []byte) []byte {
	b = binary.AppendUvarint(b, uint64(num<<3|2))
	b = binary.AppendUvarint(b, uint64(len(data)))
	return append(b, data...)
}

func varintField(b []byte, num int, v uint64) []byte {
	b = binary.AppendUvarint(b, uint64(num<<3))
	return binary.AppendUvarint(b, v)
}

// journalFields are the fields a runtime's journald driver sends with a
// line: PRIORITY 6 for stdout, 3 for stderr; CONTAINER_PARTIAL_MESSAGE on
// every part but the last of a line over 16 KiB (moby
// daemon/logger/journald/journald.go, Log).
func journalFields(e Entry, part []byte, partial bool, seq int) [][2]string {
	prio := "6"
	if e.Stream == "stderr" {
		prio = "3"
	}
	f := [][2]string{
		{"__REALTIME_TIMESTAMP", fmt.Sprint(e.Time.UnixMicro())},
		{"__MONOTONIC_TIMESTAMP", fmt.Sprint(seq + 1)},
		{"_BOOT_ID", "0123456789abcdef0123456789abcdef"},
		{"PRIORITY", prio},
		{"CONTAINER_ID", e.ID[:12]},
		{"CONTAINER_ID_FULL", e.ID},
		{"CONTAINER_NAME", e.Container},
		{"SYSLOG_IDENTIFIER", e.ID[:12]},
		{"MESSAGE", string(part)},
	}
	if partial {
		f = append(f, [2]string{"CONTAINER_PARTIAL_MESSAGE", "true"})
	}
	return f
}

func journalEntries(es []Entry) [][][2]string {
	var out [][][2]string
	for _, e := range es {
		ps := parts(e.Line, 16<<10)
		for i, p := range ps {
			out = append(out, journalFields(e, p, i < len(ps)-1, len(out)))
		}
	}
	return out
}

// JournalExport is the journal export format systemd-journal-remote reads
// and journalctl -o export writes: "NAME=value" lines, a value with a
// newline or a control character as "NAME", its 64-bit little-endian
// length and the bytes; an empty line after each entry (systemd
// docs/JOURNAL_EXPORT_FORMATS.md).
func JournalExport(es []Entry) []byte {
	var b bytes.Buffer
	for _, f := range journalEntries(es) {
		for _, kv := range f {
			if binaryField(kv[1]) {
				b.WriteString(kv[0] + "\n")
				binary.Write(&b, binary.LittleEndian, uint64(len(kv[1])))
				b.WriteString(kv[1] + "\n")
				continue
			}
			b.WriteString(kv[0] + "=" + kv[1] + "\n")
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func binaryField(v string) bool {
	for i := 0; i < len(v); i++ {
		if v[i] < 0x20 && v[i] != '\t' {
			return true
		}
	}
	return false
}

// journalctlJSON is journalctl -o json: one object a line, __CURSOR
// first; a field of 4096 bytes or more (name and "=" included) is null
// unless all (--all), and one that is not printable text an array of its
// bytes (systemd src/shared/logs-show.c, output_json, JSON_THRESHOLD).
func journalctlJSON(es []Entry, all bool) []byte {
	var b bytes.Buffer
	for i, f := range journalEntries(es) {
		fmt.Fprintf(&b, `{"__CURSOR":"s=0;i=%x"`, i+1)
		for _, kv := range f {
			var v []byte
			switch {
			case !all && len(kv[0])+1+len(kv[1]) >= 4096:
				v = []byte("null")
			case binaryField(kv[1]):
				nums := make([]string, len(kv[1]))
				for j := range kv[1] {
					nums[j] = fmt.Sprint(kv[1][j])
				}
				v = []byte("[" + strings.Join(nums, ",") + "]")
			default:
				v, _ = json.Marshal(kv[1])
			}
			fmt.Fprintf(&b, `,%q:%s`, kv[0], v)
		}
		b.WriteString("}\n")
	}
	return b.Bytes()
}

// journalctlCat is journalctl -o cat: each entry's MESSAGE on a line of
// its own, parts of a line too (logs-show.c, output_cat).
func journalctlCat(es []Entry) []byte {
	var b bytes.Buffer
	for _, f := range journalEntries(es) {
		for _, kv := range f {
			if kv[0] == "MESSAGE" {
				b.WriteString(kv[1] + "\n")
			}
		}
	}
	return b.Bytes()
}

// vectorFile is Vector's file sink with encoding json over its
// kubernetes_logs source: the line under message, with file, stream,
// source_type, timestamp and the pod's metadata, keys sorted (Vector's
// kubernetes_logs source reference; the log event's fields are a
// BTreeMap).
func vectorFile(es []Entry) []byte {
	var b bytes.Buffer
	for _, e := range es {
		l, _ := json.Marshal(map[string]any{
			"file":        fmt.Sprintf("/var/log/pods/%s_%s_uid/%s/0.log", e.Namespace, e.Pod, e.Container),
			"kubernetes":  map[string]any{"pod_name": e.Pod, "pod_namespace": e.Namespace, "pod_node_name": e.Node, "container_name": e.Container},
			"message":     string(e.Line),
			"source_type": "kubernetes_logs",
			"stream":      e.Stream,
			"timestamp":   rfc3339(e.Time),
		})
		b.Write(append(l, '\n'))
	}
	return b.Bytes()
}

// fluentdOutFile is Fluentd's out_file with its default format: "TIME
// <TAB> TAG <TAB> RECORD", the time as %Y-%m-%dT%H:%M:%S%z, over in_tail
// with the Docker JSON parser (Fluentd out_file and formatter_out_file
// documentation).
func fluentdOutFile(es []Entry) []byte {
	var b bytes.Buffer
	for _, e := range es {
		rec, _ := json.Marshal(map[string]any{"log": string(e.Line) + "\n", "stream": e.Stream})
		fmt.Fprintf(&b, "%s\tkubernetes.var.log.containers.%s_%s_%s.log\t%s\n",
			e.Time.UTC().Format("2006-01-02T15:04:05-0700"), e.Pod, e.Namespace, e.Container, rec)
	}
	return b.Bytes()
}

// logEntry is a Cloud Logging LogEntry as GKE writes a container's line:
// a JSON line parsed into jsonPayload (its message member stays there),
// anything else in textPayload; logName ends with the stream (Cloud
// Logging API reference, LogEntry; GKE's "Logging for containers").
func logEntry(e Entry, i int) map[string]any {
	le := map[string]any{
		"insertId":  fmt.Sprintf("id-%d", i),
		"logName":   "projects/ml/logs/" + e.Stream,
		"resource":  map[string]any{"type": "k8s_container", "labels": map[string]any{"namespace_name": e.Namespace, "pod_name": e.Pod, "container_name": e.Container}},
		"severity":  "INFO",
		"timestamp": rfc3339(e.Time),
	}
	var payload map[string]any
	if json.Unmarshal(e.Line, &payload) == nil {
		le["jsonPayload"] = payload
	} else {
		le["textPayload"] = string(e.Line)
	}
	return le
}

// gcloudLoggingRead is gcloud logging read --format=json: one JSON array
// of LogEntry, indented.
func gcloudLoggingRead(es []Entry) []byte {
	var all []any
	for i, e := range es {
		all = append(all, logEntry(e, i))
	}
	b, _ := json.MarshalIndent(all, "", "  ")
	return append(b, '\n')
}

// cloudStorageSink is a Cloud Logging sink to Cloud Storage: the entries
// as JSON lines, one file an hour (Cloud Logging, "Cloud Storage" routing
// destination).
func cloudStorageSink(es []Entry) []byte {
	var b bytes.Buffer
	for i, e := range es {
		l, _ := json.Marshal(logEntry(e, i))
		b.Write(append(l, '\n'))
	}
	return b.Bytes()
}

// cloudwatch is aws logs filter-log-events with its default JSON output:
// {"events":[{logStreamName, timestamp, message, ingestionTime, eventId}],
// "searchedLogStreams":[...]}, indented by four (CloudWatch Logs API
// reference, FilterLogEvents; Docker's awslogs driver puts the line in
// message).
func cloudwatch(es []Entry) []byte {
	var events []any
	for i, e := range es {
		events = append(events, map[string]any{"logStreamName": e.Pod, "timestamp": e.Time.UnixMilli(),
			"message": string(e.Line), "ingestionTime": e.Time.UnixMilli() + 5, "eventId": fmt.Sprintf("%056d", i)})
	}
	b, _ := json.MarshalIndent(map[string]any{"events": events, "searchedLogStreams": []any{}}, "", "    ")
	return append(b, '\n')
}

// splunkExport is Splunk's search/jobs/export with output_mode=json: one
// {"preview":false,"offset":N,"result":{...}} a line, the event under
// _raw, cut at TRUNCATE (10000 bytes by default, props.conf), then a
// lastrow (Splunk REST API reference, search/jobs/export).
func splunkExport(es []Entry) []byte {
	var b bytes.Buffer
	for i, e := range es {
		raw := e.Line
		if len(raw) > 10000 {
			raw = raw[:10000]
		}
		res := map[string]any{"_raw": string(raw), "_time": rfc3339(e.Time), "host": e.Node,
			"source": "/var/log/pods/" + e.Pod, "sourcetype": "kube:container:" + e.Container}
		row := map[string]any{"preview": false, "offset": i, "result": res}
		if i == len(es)-1 {
			row["lastrow"] = true
		}
		l, _ := json.Marshal(row)
		b.Write(append(l, '\n'))
	}
	return b.Bytes()
}

// datadogArchive is a Datadog log archive: gzip'd JSON lines of _id,
// date, host, service, source, status, tags, message and the rest under
// attributes; a JSON line's own members are its attributes, its message
// member the message (Vector src/sinks/datadog_archives.rs,
// DatadogArchivesEncoding, which writes Datadog's rehydratable format).
func datadogArchive(es []Entry) []byte {
	var raw bytes.Buffer
	for i, e := range es {
		ev := map[string]any{"_id": fmt.Sprintf("AAAAAX%012d", i), "date": e.Time.UTC().Format("2006-01-02T15:04:05.000Z"),
			"host": e.Node, "service": e.Container, "source": "container", "status": "info",
			"tags": []string{"kube_namespace:" + e.Namespace, "pod_name:" + e.Pod}}
		var attrs map[string]any
		if json.Unmarshal(e.Line, &attrs) == nil {
			if m, ok := attrs["message"]; ok {
				ev["message"] = m
				delete(attrs, "message")
			}
		} else {
			ev["message"] = string(e.Line)
		}
		if attrs == nil {
			attrs = map[string]any{}
		}
		ev["attributes"] = attrs
		l, _ := json.Marshal(ev)
		raw.Write(append(l, '\n'))
	}
	var z bytes.Buffer
	w := gzip.NewWriter(&z)
	w.Write(raw.Bytes())
	w.Close()
	return z.Bytes()
}

// otelFileExporter is the OpenTelemetry collector's file exporter over
// the filelog receiver with its container parser: one
// ExportLogsServiceRequest a line in OTLP JSON, the line in
// body.stringValue and the stream in the log.iostream attribute
// (opentelemetry-collector-contrib exporter/fileexporter; the container
// parser's documentation).
func otelFileExporter(es []Entry) []byte {
	var records []any
	for _, e := range es {
		records = append(records, map[string]any{
			"timeUnixNano":         fmt.Sprint(e.Time.UnixNano()),
			"observedTimeUnixNano": fmt.Sprint(e.Time.UnixNano() + 1000),
			"body":                 map[string]any{"stringValue": string(e.Line)},
			"attributes": []any{
				map[string]any{"key": "log.iostream", "value": map[string]any{"stringValue": e.Stream}},
				map[string]any{"key": "logtag", "value": map[string]any{"stringValue": "F"}},
			},
		})
	}
	req := map[string]any{"resourceLogs": []any{map[string]any{
		"resource":  map[string]any{"attributes": []any{map[string]any{"key": "k8s.pod.name", "value": map[string]any{"stringValue": "pods"}}}},
		"scopeLogs": []any{map[string]any{"scope": map[string]any{}, "logRecords": records}},
	}}}
	b, _ := json.Marshal(req)
	return append(b, '\n')
}

// lokiQueryRange is Loki's /loki/api/v1/query_range response for a log
// query: data.result is one stream per label set, each with its labels
// (promtail's cri stage sets stream) and values of [nanoseconds, line]
// (Loki HTTP API reference, "Query logs within a range of time").
func lokiQueryRange(es []Entry) []byte {
	streams := map[string][]any{}
	var order []string
	for _, e := range es {
		k := e.Pod + "/" + e.Stream
		if _, ok := streams[k]; !ok {
			order = append(order, k)
		}
		streams[k] = append(streams[k], []any{fmt.Sprint(e.Time.UnixNano()), string(e.Line)})
	}
	var result []any
	for _, k := range order {
		pod, stream, _ := strings.Cut(k, "/")
		result = append(result, map[string]any{"stream": map[string]any{"pod": pod, "stream": stream, "app": "train"},
			"values": streams[k]})
	}
	b, _ := json.Marshal(map[string]any{"status": "success",
		"data": map[string]any{"resultType": "streams", "result": result, "stats": map[string]any{}}})
	return append(b, '\n')
}

// lokiJSONL is logcli query --output=jsonl: one map of timestamp, line
// and labels a line (Loki pkg/logcli/output/jsonl.go).
func lokiJSONL(es []Entry) []byte {
	var b bytes.Buffer
	for _, e := range es {
		l, _ := json.Marshal(map[string]any{"timestamp": e.Time.UTC(), "line": string(e.Line),
			"labels": map[string]string{"pod": e.Pod, "stream": e.Stream}})
		b.Write(append(l, '\n'))
	}
	return b.Bytes()
}
