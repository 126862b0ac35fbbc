// Prints the syntax tree Grafana's LogQL grammar (@grafana/lezer-logql)
// gives each query: stdin is a JSON array of query strings, stdout a JSON
// array of trees, one per query. A node is {name, text, error, children}:
// text is the part of the query it spans; error marks the nodes the parser inserted where the text is
// not LogQL (Lezer recovers instead of stopping). The tests in
// test/examples (logql.go) read the trees.
import { readFileSync } from "node:fs";
import { parser } from "@grafana/lezer-logql";

function node(q, cursor) {
  const n = { name: cursor.name, text: q.slice(cursor.from, cursor.to), error: cursor.type.isError };
  if (cursor.firstChild()) {
    n.children = [];
    do n.children.push(node(q, cursor));
    while (cursor.nextSibling());
    cursor.parent();
  }
  return n;
}

const queries = JSON.parse(readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify(queries.map((q) => node(q, parser.parse(q).cursor()))));
