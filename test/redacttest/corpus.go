// Package redacttest holds the secrets corpus: the ways the tools a training
// container runs take a credential on their command line (Kubernetes
// expands $(VAR) into argv), each as its documentation shows it, with the
// credential no output may carry and the words that must stay. Each form's
// comment names its source; the values are made up.
package redacttest

import (
	"encoding/json"
	"strings"
)

// Form is one way a credential reaches argv.
type Form struct {
	Name string
	Argv []string // Argv[0] is the program
	// Secrets are the credentials in Argv: none of them, nor any
	// FragmentBytes-long piece, may appear in any output.
	Secrets []string
	// Keep must appear unchanged in the recorded argv, so a rollback can tell
	// which command ran: the program and what is no credential.
	Keep []string
}

// FragmentBytes is the piece of a secret no output may hold: a secret cut short still leaks.
const FragmentBytes = 6

// Leaks reports every secret, or FragmentBytes-long piece of one, that out
// holds as it is or as JSON escapes it.
func Leaks(out string, secrets []string) []string {
	var found []string
	for _, s := range secrets {
		for _, piece := range fragments(s) {
			enc, _ := json.Marshal(piece)
			if strings.Contains(out, piece) || strings.Contains(out, string(enc[1:len(enc)-1])) {
				found = append(found, piece)
				break
			}
		}
	}
	return found
}

func fragments(s string) []string {
	out := []string{s}
	for i := 0; i+FragmentBytes <= len(s); i++ {
		out = append(out, s[i:i+FragmentBytes])
	}
	return out
}

// pem is a private key block as ssh-keygen and openssl write it; the body is the secret.
const pemBody = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\nQyNTUxOQAAACDQk3vXw9PqTzLmRrYcVbNhGjKsFaEuWiOpIxZyHtMdBwAAAJgKq7Tz"

// pemLines are the body's lines, each a secret (outputs escape the newline).
var pemLines = []string{pemBody[:strings.IndexByte(pemBody, '\n')], pemBody[strings.IndexByte(pemBody, '\n')+1:]}

const pem = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + pemBody + "\n-----END OPENSSH PRIVATE KEY-----\n"

// jwt is a JSON Web Token (RFC 7519, section 3.1): header, claims, signature.
const jwt = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJRbVp4V3ZUcUtyIn0.Yq3NfLw8ZpTxMvKbHcRdJsGe2aUo7iQk9yWl0En4Xt"

// Forms is the corpus: the forms below, then each of Tokens alone on a command line.
var Forms = append([]Form{
	// curl(1) manual: -u/--user <user:password>, -H/--header, --oauth2-bearer,
	// -x/--proxy with user:password in the URL, -U/--proxy-user, -b/--cookie,
	// -d/--data, -E/--cert <certificate[:password]>, and URL user-info.
	{"curl-user-flag", []string{"curl", "-u", "admin:Qv7TzKp2mWx9", "https://api.example.com/v1"}, []string{"Qv7TzKp2mWx9"}, []string{"curl", "-u", "https://api.example.com/v1"}},
	{"curl-user-long", []string{"curl", "--user", "admin:Rm4XcLq8NbVz", "https://api.example.com/v1"}, []string{"Rm4XcLq8NbVz"}, []string{"curl", "--user"}},
	{"curl-user-attached", []string{"curl", "-uadmin:Hs6WdPk3JyTq", "https://api.example.com/v1"}, []string{"Hs6WdPk3JyTq"}, []string{"curl", "https://api.example.com/v1"}},
	{"curl-bearer-header", []string{"curl", "-H", "Authorization: Bearer Zt8KmQw2XpLr", "https://api.example.com/v1"}, []string{"Zt8KmQw2XpLr"}, []string{"curl", "-H", "https://api.example.com/v1"}},
	{"curl-basic-header", []string{"curl", "--header", "Authorization: Basic YWRtaW46Tn5VcXdQ", "https://api.example.com/"}, []string{"YWRtaW46Tn5VcXdQ"}, []string{"curl", "--header"}},
	{"curl-api-key-header", []string{"curl", "--header", "X-Api-Key: Fp3VbNz7QkWs", "https://api.example.com/"}, []string{"Fp3VbNz7QkWs"}, []string{"curl", "--header"}},
	{"curl-api-key-header-no-space", []string{"curl", "-H", "X-Api-Key:Gk5RcTw9ZmXa", "https://api.example.com/"}, []string{"Gk5RcTw9ZmXa"}, []string{"curl", "-H"}},
	{"curl-oauth2-bearer", []string{"curl", "--oauth2-bearer", "Lw2NqXv6TzPk", "https://api.example.com/"}, []string{"Lw2NqXv6TzPk"}, []string{"curl", "--oauth2-bearer", "https://api.example.com/"}},
	{"curl-url-userinfo", []string{"curl", "-fsSL", "https://deploy:Jc8MwRt4KxVq@files.example.com/data.tar"}, []string{"Jc8MwRt4KxVq"}, []string{"curl", "-fsSL"}},
	{"curl-proxy-user", []string{"curl", "--proxy-user", "proxy:Tb5XzKq7NwLm", "--proxy", "http://proxy.example.com:3128", "https://api.example.com/"}, []string{"Tb5XzKq7NwLm"}, []string{"curl", "--proxy", "http://proxy.example.com:3128"}},
	{"curl-proxy-url-userinfo", []string{"curl", "-x", "http://proxy:Vn3QpLw8ZkRx@proxy.example.com:3128", "https://api.example.com/"}, []string{"Vn3QpLw8ZkRx"}, []string{"curl", "-x"}},
	{"curl-cookie", []string{"curl", "--cookie", "session=Wq6TzXm2KpVb", "https://api.example.com/"}, []string{"Wq6TzXm2KpVb"}, []string{"curl", "--cookie"}},
	{"curl-form-password", []string{"curl", "-d", "username=u&password=Xk9LwNq4TzRm", "https://api.example.com/login"}, []string{"Xk9LwNq4TzRm"}, []string{"curl", "-d"}},
	{"curl-json-password", []string{"curl", "--data-raw", `{"user":"u","password":"Yp2VzKw8QmLt"}`, "https://api.example.com/login"}, []string{"Yp2VzKw8QmLt"}, []string{"curl", "--data-raw"}},
	{"curl-cert-password", []string{"curl", "--cert", "client.pem:Zm7QxTk3WpNv", "https://api.example.com/"}, []string{"Zm7QxTk3WpNv"}, []string{"curl", "--cert"}},
	{"curl-query-token", []string{"curl", "https://api.example.com/v1/items?access_token=Ar4KwZq9LtXm&page=2"}, []string{"Ar4KwZq9LtXm"}, []string{"curl"}},

	// GNU Wget manual: --user/--password, --http-password, --ftp-password,
	// --proxy-password, --header=header-line, --post-data.
	{"wget-bearer-header", []string{"wget", "--header=Authorization: Bearer Bq8TmXz3KwVp", "https://files.example.com/w.bin"}, []string{"Bq8TmXz3KwVp"}, []string{"wget", "https://files.example.com/w.bin"}},
	{"wget-api-key-header", []string{"wget", "--header=X-Api-Key: Cz5NwQk7TpLx", "https://files.example.com/w.bin"}, []string{"Cz5NwQk7TpLx"}, []string{"wget"}},
	{"wget-password", []string{"wget", "--user=u", "--password=Dx2VqLm9KzTw", "https://files.example.com/w.bin"}, []string{"Dx2VqLm9KzTw"}, []string{"wget", "--user=u", "https://files.example.com/w.bin"}},
	{"wget-http-password", []string{"wget", "--http-user=u", "--http-password=Ek6TzWp4QxNm", "https://files.example.com/"}, []string{"Ek6TzWp4QxNm"}, []string{"wget", "--http-user=u"}},
	{"wget-ftp-password", []string{"wget", "--ftp-password=Fm3XkQz8VwLp", "ftp://ftp.example.com/pub/x"}, []string{"Fm3XkQz8VwLp"}, []string{"wget", "ftp://ftp.example.com/pub/x"}},
	{"wget-proxy-password", []string{"wget", "--proxy-user=p", "--proxy-password=Gn9WqTm2KxZv", "https://files.example.com/"}, []string{"Gn9WqTm2KxZv"}, []string{"wget", "--proxy-user=p"}},
	{"wget-post-data", []string{"wget", "--post-data=user=u&password=Hp4ZxKw7TqMn", "https://files.example.com/login"}, []string{"Hp4ZxKw7TqMn"}, []string{"wget"}},

	// git-config(1) http.extraHeader and url.<base>.insteadOf, git-clone(1)
	// URLs with user-info ("https://[user@]host/path"), as GitHub and
	// GitLab tokens are passed.
	{"git-extraheader-basic", []string{"git", "-c", "http.extraHeader=AUTHORIZATION: basic Jq7TxWm3KzVp", "clone", "https://git.example.com/ml/train.git"}, []string{"Jq7TxWm3KzVp"}, []string{"git", "-c", "clone", "https://git.example.com/ml/train.git"}},
	{"git-extraheader-per-url", []string{"git", "-c", "http.https://git.example.com/.extraheader=Authorization: Bearer Kr2WzQp8TxLm", "fetch"}, []string{"Kr2WzQp8TxLm"}, []string{"git", "-c", "fetch"}},
	{"git-clone-oauth2", []string{"git", "clone", "https://oauth2:Lt5XqKm9WzVn@git.example.com/ml/train.git"}, []string{"Lt5XqKm9WzVn"}, []string{"git", "clone"}},
	{"git-clone-access-token", []string{"git", "clone", "https://x-access-token:ghs_Mw8TzQk3XpVnLr6KwZq2TmXb7NpQs4VzKw@git.example.com/o/r.git"}, []string{"ghs_Mw8TzQk3XpVnLr6KwZq2TmXb7NpQs4VzKw"}, []string{"git", "clone"}},
	{"git-token-as-user", []string{"git", "push", "https://ghp_Nx4QwTz9KmLpVr2XkWq7TzNm3PbVx6KqLw@git.example.com/o/r.git"}, []string{"ghp_Nx4QwTz9KmLpVr2XkWq7TzNm3PbVx6KqLw"}, []string{"git", "push"}},
	{"git-remote-set-url", []string{"git", "remote", "set-url", "origin", "https://u:Pz6KxWq2TmVn@git.example.com/o/r.git"}, []string{"Pz6KxWq2TmVn"}, []string{"git", "remote", "set-url", "origin"}},
	{"git-insteadof", []string{"git", "config", "--global", "url.https://u:Qm3TzKw8XpLv@git.example.com/.insteadOf", "https://git.example.com/"}, []string{"Qm3TzKw8XpLv"}, []string{"git", "config", "--global", "https://git.example.com/"}},
	{"git-fine-grained-pat", []string{"git", "clone", "https://u:github_pat_11ABCDEFG0Rq7XwTzKm3PvLn_Zq8WkTx2NmVbLp4QzXk9TwRm6PnVz@git.example.com/o/r.git"}, []string{"github_pat_11ABCDEFG0Rq7XwTzKm3PvLn_Zq8WkTx2NmVbLp4QzXk9TwRm6PnVz"}, []string{"git", "clone"}},

	// HTTPie documentation: -a/--auth USER[:PASS], --auth-type bearer,
	// request items Header:Value, field=value, param==value, field:=json.
	{"httpie-auth-short", []string{"http", "-a", "u:Rx9WqTk4ZmVp", "api.example.com/items"}, []string{"Rx9WqTk4ZmVp"}, []string{"http", "-a", "api.example.com/items"}},
	{"httpie-auth-long", []string{"http", "--auth", "u:Sz4KmXq7TwLn", "api.example.com/items"}, []string{"Sz4KmXq7TwLn"}, []string{"http", "--auth", "api.example.com/items"}},
	{"httpie-bearer", []string{"http", "--auth-type=bearer", "--auth", "Tk7ZwQx2MpVr", "api.example.com/items"}, []string{"Tk7ZwQx2MpVr"}, []string{"http", "--auth", "api.example.com/items"}},
	{"httpie-header-item", []string{"http", "api.example.com/items", "Authorization:Bearer Uw3TqKz8XmLp"}, []string{"Uw3TqKz8XmLp"}, []string{"http", "api.example.com/items"}},
	{"httpie-token-header-item", []string{"http", "api.example.com/items", "X-API-Token:Vq8XzTm4KwNp"}, []string{"Vq8XzTm4KwNp"}, []string{"http", "api.example.com/items"}},
	{"httpie-field", []string{"http", "POST", "api.example.com/login", "user=u", "password=Wm2KxQz9TpVl"}, []string{"Wm2KxQz9TpVl"}, []string{"http", "POST", "api.example.com/login", "user=u"}},
	{"httpie-query-param", []string{"http", "api.example.com/items", "api_key==Xz5TwKq3MpLn"}, []string{"Xz5TwKq3MpLn"}, []string{"http", "api.example.com/items"}},
	{"httpie-raw-json", []string{"http", "POST", "api.example.com/login", `token:="Yk8QzTw2XmVp"`}, []string{"Yk8QzTw2XmVp"}, []string{"http", "POST"}},

	// AWS CLI reference: aws configure set, aws s3 cp --sse-c-key,
	// secretsmanager create-secret --secret-string, rds create-db-instance
	// --master-user-password; presigned URLs (Signature Version 4 query
	// parameters) and access key ids (AKIA...).
	{"aws-configure-secret-key", []string{"aws", "configure", "set", "aws_secret_access_key", "Zq4Tk8XwMp2VnLr6KzQw9TxBm3PvNk7WzLq5XtRm"}, []string{"Zq4Tk8XwMp2VnLr6KzQw9TxBm3PvNk7WzLq5XtRm"}, []string{"aws", "configure", "set", "aws_secret_access_key"}},
	{"aws-configure-access-key-id", []string{"aws", "configure", "set", "aws_access_key_id", "AKIAQZTWXKMPLVNRBQ7Z"}, []string{"AKIAQZTWXKMPLVNRBQ7Z"}, []string{"aws", "configure", "set"}},
	{"aws-configure-session-token", []string{"aws", "configure", "set", "aws_session_token", "IQoJb3JpZ2luX2VjEKq7TzWxMp"}, []string{"IQoJb3JpZ2luX2VjEKq7TzWxMp"}, []string{"aws", "configure", "set"}},
	{"aws-sse-c-key", []string{"aws", "s3", "cp", "s3://bucket/model.pt", ".", "--sse-c", "AES256", "--sse-c-key", "Am7XqTz3KwVpLn"}, []string{"Am7XqTz3KwVpLn"}, []string{"aws", "s3", "cp", "s3://bucket/model.pt", "--sse-c", "AES256", "--sse-c-key"}},
	{"aws-secret-string", []string{"aws", "secretsmanager", "create-secret", "--name", "db", "--secret-string", `{"username":"u","password":"Bn4KzWq8TxMp"}`}, []string{"Bn4KzWq8TxMp"}, []string{"aws", "secretsmanager", "create-secret", "--name", "db"}},
	{"aws-master-user-password", []string{"aws", "rds", "create-db-instance", "--db-instance-identifier", "ml", "--master-user-password", "Cp9TwXk2QzLn"}, []string{"Cp9TwXk2QzLn"}, []string{"aws", "rds", "create-db-instance", "--db-instance-identifier", "ml"}},
	{"aws-presigned-url", []string{"curl", "https://bucket.s3.us-east-1.amazonaws.com/m.pt?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAQZTWXKMPLVNRBQ7Z%2F20261201%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Security-Token=Dq2XwTz7KmVp&X-Amz-Signature=Ek8ZqTw3XmLpVnKr"}, []string{"AKIAQZTWXKMPLVNRBQ7Z", "Dq2XwTz7KmVp", "Ek8ZqTw3XmLpVnKr"}, []string{"curl"}},
	// IAM User Guide, "Manage access keys for IAM users": an access key is
	// an id and a 40-character secret, often written one after the other.
	{"aws-key-pair-args", []string{"creds", "AKIAQZTWXKMPLVNRBQ7Z", "Kq7TzWx2Mp/VnLr6KzQw9TxBm3Pv+k7WzLq5XtRm", "s3://bucket"}, []string{"AKIAQZTWXKMPLVNRBQ7Z", "Kq7TzWx2Mp/VnLr6KzQw9TxBm3Pv+k7WzLq5XtRm"}, []string{"creds", "s3://bucket"}},
	{"aws-key-pair-text", []string{"sh", "-c", "echo AKIAQZTWXKMPLVNRBQ7Z:Kq7TzWx2Mp/VnLr6KzQw9TxBm3Pv+k7WzLq5XtRm > creds"}, []string{"AKIAQZTWXKMPLVNRBQ7Z", "Kq7TzWx2Mp/VnLr6KzQw9TxBm3Pv+k7WzLq5XtRm"}, []string{"sh", "-c"}},
	{"aws-env-in-shell", []string{"sh", "-c", "AWS_SECRET_ACCESS_KEY=Fr5TzKq9WxMpLv aws s3 sync s3://bucket/data /data"}, []string{"Fr5TzKq9WxMpLv"}, []string{"sh", "-c"}},

	// gcloud reference: sql users set-password --password, sql instances
	// create --root-password, builds submit --substitutions.
	{"gcloud-sql-password", []string{"gcloud", "sql", "users", "set-password", "root", "--host=%", "--instance=ml", "--password=Gs3XwQk7TzVm"}, []string{"Gs3XwQk7TzVm"}, []string{"gcloud", "sql", "users", "set-password", "--instance=ml"}},
	{"gcloud-root-password", []string{"gcloud", "sql", "instances", "create", "ml", "--root-password", "Ht8KzWp2QxLn"}, []string{"Ht8KzWp2QxLn"}, []string{"gcloud", "sql", "instances", "create"}},
	{"gcloud-substitutions", []string{"gcloud", "builds", "submit", "--substitutions=_REGION=us,_DB_PASSWORD=Jw4TqXm9KzVp"}, []string{"Jw4TqXm9KzVp"}, []string{"gcloud", "builds", "submit"}},

	// Azure CLI reference: az login -u/-p and --service-principal, az storage
	// --account-key, --sas-token, --connection-string, shared access
	// signature URLs (sig=), az acr login --password, az vm create
	// --admin-password.
	{"az-login-password", []string{"az", "login", "-u", "user@example.com", "-p", "Kx2WzTq8MpVn"}, []string{"Kx2WzTq8MpVn"}, []string{"az", "login", "-u", "user@example.com", "-p"}},
	{"az-login-service-principal", []string{"az", "login", "--service-principal", "-u", "0f1e2d3c-app", "--password", "Lm7QxTz3KwVp", "--tenant", "contoso.onmicrosoft.com"}, []string{"Lm7QxTz3KwVp"}, []string{"az", "login", "--service-principal", "--tenant"}},
	{"az-account-key", []string{"az", "storage", "blob", "upload", "--account-name", "acct", "--account-key", "Mn4TwXk9QzLpVr==", "-f", "m.pt"}, []string{"Mn4TwXk9QzLpVr"}, []string{"az", "storage", "blob", "upload", "--account-name", "acct", "-f", "m.pt"}},
	{"az-sas-token", []string{"az", "storage", "blob", "download", "--sas-token", "se=2026-12-31&sp=r&sv=2022-11-02&sr=b&sig=Np8KzTq2XwMv%3D"}, []string{"Np8KzTq2XwMv"}, []string{"az", "storage", "blob", "download"}},
	{"az-sas-url", []string{"azcopy", "copy", "https://acct.blob.core.windows.net/c/m.pt?sv=2022-11-02&se=2026-12-31&sr=b&sp=r&sig=Pq3XwTk7ZmLn%2B", "/data/"}, []string{"Pq3XwTk7ZmLn"}, []string{"azcopy", "copy", "/data/"}},
	{"az-connection-string", []string{"az", "storage", "container", "list", "--connection-string", "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=Qr9TzKw4XmVp==;EndpointSuffix=core.windows.net"}, []string{"Qr9TzKw4XmVp"}, []string{"az", "storage", "container", "list"}},
	{"az-acr-login", []string{"az", "acr", "login", "--name", "reg", "--username", "u", "--password", "Rs2WqXz8TkMn"}, []string{"Rs2WqXz8TkMn"}, []string{"az", "acr", "login", "--name"}},
	{"az-vm-admin-password", []string{"az", "vm", "create", "-n", "vm", "--admin-username", "azureuser", "--admin-password", "St7KxTq3WzVp!"}, []string{"St7KxTq3WzVp"}, []string{"az", "vm", "create", "--admin-username", "azureuser"}},

	// kubectl reference: --token, kubectl config set-credentials --token /
	// --password, kubectl create secret generic --from-literal, create secret
	// docker-registry --docker-password.
	{"kubectl-token-equals", []string{"kubectl", "--token=Tw4ZqKx9MpLn", "get", "pods"}, []string{"Tw4ZqKx9MpLn"}, []string{"kubectl", "get", "pods"}},
	{"kubectl-token-separate", []string{"kubectl", "--token", "Ux8TzWq2KmVp", "get", "pods"}, []string{"Ux8TzWq2KmVp"}, []string{"kubectl", "--token", "get", "pods"}},
	{"kubectl-set-credentials-token", []string{"kubectl", "config", "set-credentials", "ci", "--token=Vz3KwXq7TmLn"}, []string{"Vz3KwXq7TmLn"}, []string{"kubectl", "config", "set-credentials", "ci"}},
	{"kubectl-set-credentials-password", []string{"kubectl", "config", "set-credentials", "ci", "--username=ci", "--password=Wq9TxKz4MpVn"}, []string{"Wq9TxKz4MpVn"}, []string{"kubectl", "config", "set-credentials", "--username=ci"}},
	{"kubectl-from-literal", []string{"kubectl", "create", "secret", "generic", "db", "--from-literal=password=Xm2ZqTw8KxLp"}, []string{"Xm2ZqTw8KxLp"}, []string{"kubectl", "create", "secret", "generic", "db"}},
	{"kubectl-from-literal-api-key", []string{"kubectl", "create", "secret", "generic", "api", "--from-literal=api-key=Yn7KxWq3TzMv"}, []string{"Yn7KxWq3TzMv"}, []string{"kubectl", "create", "secret", "generic", "api"}},
	{"kubectl-docker-password", []string{"kubectl", "create", "secret", "docker-registry", "reg", "--docker-server=r.example.com", "--docker-username=u", "--docker-password=Zp4TwXk9QmLn"}, []string{"Zp4TwXk9QmLn"}, []string{"kubectl", "create", "secret", "docker-registry", "--docker-server=r.example.com", "--docker-username=u"}},

	// openssl-passphrase-options(1): -passin/-passout/-pass with pass:X.
	{"openssl-passin", []string{"openssl", "pkcs12", "-in", "cert.p12", "-passin", "pass:Aq8KzTw3XmVp"}, []string{"Aq8KzTw3XmVp"}, []string{"openssl", "pkcs12", "-in", "cert.p12", "-passin"}},
	{"openssl-passout", []string{"openssl", "genrsa", "-aes256", "-passout", "pass:Bw3TxQz8KmLn", "2048"}, []string{"Bw3TxQz8KmLn"}, []string{"openssl", "genrsa", "-aes256", "-passout", "2048"}},
	{"openssl-pass", []string{"openssl", "enc", "-aes-256-cbc", "-pbkdf2", "-pass", "pass:Cx9WqKz4TmVp", "-in", "m.pt"}, []string{"Cx9WqKz4TmVp"}, []string{"openssl", "enc", "-aes-256-cbc", "-pbkdf2", "-pass", "-in", "m.pt"}},

	// pip documentation: --index-url / --extra-index-url with user-info,
	// VCS URLs (git+https://token@host), pip config set, --proxy in the
	// form scheme://[user:passwd@]proxy.server:port.
	{"pip-index-url", []string{"pip", "install", "--index-url", "https://u:Dz4TqXw9KmLp@pkgs.example.com/simple", "torch"}, []string{"Dz4TqXw9KmLp"}, []string{"pip", "install", "--index-url", "torch"}},
	{"pip-extra-index-url", []string{"pip", "install", "--extra-index-url=https://__token__:Ex8KwTz3QmVn@pkgs.example.com/simple", "mylib"}, []string{"Ex8KwTz3QmVn"}, []string{"pip", "install", "mylib"}},
	{"pip-vcs-token", []string{"pip", "install", "git+https://Fq3ZxTw7KmLpVr@git.example.com/o/lib.git"}, []string{"Fq3ZxTw7KmLpVr"}, []string{"pip", "install"}},
	{"pip-config-set", []string{"pip", "config", "set", "global.index-url", "https://u:Gw7TqKx2ZmVp@pkgs.example.com/simple"}, []string{"Gw7TqKx2ZmVp"}, []string{"pip", "config", "set", "global.index-url"}},
	{"pip-proxy", []string{"pip", "install", "--proxy", "http://u:Hx2WzQk8TmLn@proxy.example.com:3128", "torch"}, []string{"Hx2WzQk8TmLn"}, []string{"pip", "install", "--proxy", "torch"}},

	// conda documentation: channel_alias and channels with user-info, and
	// the token path segment of a channel URL (/t/<token>/), which conda
	// masks in its own output.
	{"conda-channel-alias", []string{"conda", "config", "--set", "channel_alias", "https://u:Jz8KwTq3XmVp@conda.example.com"}, []string{"Jz8KwTq3XmVp"}, []string{"conda", "config", "--set", "channel_alias"}},
	{"conda-token-channel", []string{"conda", "install", "-c", "https://conda.example.com/t/Kq3XzTw8MpLn-Vr4/ml", "pkg"}, []string{"Kq3XzTw8MpLn-Vr4"}, []string{"conda", "install", "-c", "pkg"}},
	{"conda-token-set", []string{"conda", "token", "set", "Lw8TzKq2XmVpNr"}, []string{"Lw8TzKq2XmVpNr"}, []string{"conda", "token"}},
	{"anaconda-login", []string{"anaconda", "login", "--username", "u", "--password", "Mx4KwTz9QmLp"}, []string{"Mx4KwTz9QmLp"}, []string{"anaconda", "login", "--username", "--password"}},

	// huggingface_hub CLI guide: huggingface-cli login --token, upload and
	// download --token; User Access Tokens start with hf_.
	{"hf-login-token", []string{"huggingface-cli", "login", "--token", "hf_NqTzKwXm3PvLr8ZqWx2TmKbNp7VzQk"}, []string{"hf_NqTzKwXm3PvLr8ZqWx2TmKbNp7VzQk"}, []string{"huggingface-cli", "login", "--token"}},
	{"hf-upload-token-equals", []string{"huggingface-cli", "upload", "org/model", "./out", "--token=hf_PwXzTq4KmLn9VrZx3WqTkBm8NpVzKw"}, []string{"hf_PwXzTq4KmLn9VrZx3WqTkBm8NpVzKw"}, []string{"huggingface-cli", "upload", "org/model", "./out"}},
	{"hf-token-positional", []string{"python", "download.py", "hf_QxZkTw8MpLn3VrWq2TzKbNm7PvXzKq"}, []string{"hf_QxZkTw8MpLn3VrWq2TzKbNm7PvXzKq"}, []string{"python", "download.py"}},
	{"hf-git-url", []string{"git", "clone", "https://u:hf_RzTwKq3XmPv8LnWx2ZqTkNb7MpVzQw@hub.example.com/org/model"}, []string{"hf_RzTwKq3XmPv8LnWx2ZqTkNb7MpVzQw"}, []string{"git", "clone"}},
	{"hf-hub-token-flag", []string{"python", "train.py", "--push_to_hub", "--hub_token", "hf_SwKzTq9XmPv4LnZx3WqTkBm8NrVzKw"}, []string{"hf_SwKzTq9XmPv4LnZx3WqTkBm8NrVzKw"}, []string{"python", "train.py", "--push_to_hub", "--hub_token"}},

	// wandb CLI reference: wandb login [OPTIONS] [KEY], with --relogin and
	// --host; WANDB_API_KEY in the environment of the command.
	{"wandb-login-key", []string{"wandb", "login", "Tq9XzKw3MpLnVr8ZqWx2TmKbNp7VzQkLw4TzXm6P"}, []string{"Tq9XzKw3MpLnVr8ZqWx2TmKbNp7VzQkLw4TzXm6P"}, []string{"wandb", "login"}},
	{"wandb-relogin-key", []string{"wandb", "login", "--relogin", "Uz4KwTq8XmPvLn3ZqWx9TmKbNr2VzQkLw7TzXm5P"}, []string{"Uz4KwTq8XmPvLn3ZqWx9TmKbNr2VzQkLw7TzXm5P"}, []string{"wandb", "login", "--relogin"}},
	{"wandb-host-key", []string{"wandb", "login", "--host", "https://wandb.example.com", "Vw8TzKq3XmPvLn9ZqWx4TmKbNp2VzQkLr7TzXm6P"}, []string{"Vw8TzKq3XmPvLn9ZqWx4TmKbNp2VzQkLr7TzXm6P"}, []string{"wandb", "login", "--host", "https://wandb.example.com"}},
	{"wandb-env-in-shell", []string{"sh", "-c", "WANDB_API_KEY=Wx3KzTq9MpLnVr python train.py"}, []string{"Wx3KzTq9MpLnVr"}, []string{"sh", "-c"}},

	// MLflow documentation: mlflow server --backend-store-uri with a
	// SQLAlchemy database URL (dialect+driver://user:password@host/db), and
	// MLFLOW_TRACKING_PASSWORD / MLFLOW_TRACKING_TOKEN.
	{"mlflow-backend-postgres", []string{"mlflow", "server", "--backend-store-uri", "postgresql://mlflow:Xz9TwKq4MpLn@db:5432/mlflow", "--host", "0.0.0.0"}, []string{"Xz9TwKq4MpLn"}, []string{"mlflow", "server", "--backend-store-uri", "--host", "0.0.0.0"}},
	{"mlflow-backend-mysql", []string{"mlflow", "server", "--backend-store-uri=mysql+pymysql://mlflow:Yq4KzTw8XmLp@db:3306/mlflow"}, []string{"Yq4KzTw8XmLp"}, []string{"mlflow", "server"}},
	{"mlflow-tracking-password", []string{"sh", "-c", "MLFLOW_TRACKING_USERNAME=u MLFLOW_TRACKING_PASSWORD=Zw8TqKx3MpVn mlflow run ."}, []string{"Zw8TqKx3MpVn"}, []string{"sh", "-c"}},
	{"mlflow-tracking-token", []string{"env", "MLFLOW_TRACKING_TOKEN=Ax3KwTz9QmLpVr", "mlflow", "runs", "list"}, []string{"Ax3KwTz9QmLpVr"}, []string{"env", "mlflow", "runs", "list"}},

	// docker login reference: -u/--username, -p/--password, --password-stdin.
	{"docker-login-short", []string{"docker", "login", "-u", "u", "-p", "Bz8TqKw3XmLp", "r.example.com"}, []string{"Bz8TqKw3XmLp"}, []string{"docker", "login", "-u", "-p", "r.example.com"}},
	{"docker-login-long", []string{"docker", "login", "--username", "u", "--password", "Cw3KzTq8MpVn", "r.example.com"}, []string{"Cw3KzTq8MpVn"}, []string{"docker", "login", "--password", "r.example.com"}},
	{"docker-login-equals", []string{"docker", "login", "--password=Dx8TwKq3ZmLp", "r.example.com"}, []string{"Dx8TwKq3ZmLp"}, []string{"docker", "login", "r.example.com"}},
	{"docker-login-stdin", []string{"sh", "-c", "echo Ez3KqTw8XmVp | docker login -u u --password-stdin r.example.com"}, []string{"Ez3KqTw8XmVp"}, []string{"sh", "-c"}},
	{"docker-run-env", []string{"docker", "run", "-e", "DB_PASSWORD=Fw8TzKq3MpLn", "train:1"}, []string{"Fw8TzKq3MpLn"}, []string{"docker", "run", "-e", "train:1"}},

	// Forms a redactor that reads flags alone misses: a PEM block after a
	// flag and alone, a value past ';' and '&', escaped JSON, a quoted
	// password in a command line, attached short flags, the names jwt,
	// bearer, pwd, pw, sig, JSON "pass", webhooks, bare token formats,
	// user:password@host without a scheme (torchrun's --rdzv-endpoint).
	{"pem-after-ssh-key", []string{"deploy", "--ssh-key", pem, "--host", "gpu-1"}, pemLines, []string{"deploy", "--ssh-key", "--host", "gpu-1"}},
	{"pem-positional", []string{"install-key", pem}, pemLines, []string{"install-key"}},
	{"flag-value-past-semicolon", []string{"app", "--db-password=Gq3S;Tail&Zx8WkV"}, []string{"Gq3S;Tail&Zx8WkV", "Tail&Zx8WkV"}, []string{"app"}},
	{"assignment-past-semicolon", []string{"app", "DB_PASSWORD=Hw8S;Tail&Zq3KmT"}, []string{"Hw8S;Tail&Zq3KmT", "Tail&Zq3KmT"}, []string{"app"}},
	{"escaped-json", []string{"sh", "-c", `python train.py --config "{\"password\":\"Jx3KwTz8QmVp\"}"`}, []string{"Jx3KwTz8QmVp"}, []string{"sh", "-c"}},
	{"quoted-two-words", []string{"sh", "-c", "mysql --password='Kq8Tz Wx3MpLn' -h db"}, []string{"Kq8Tz Wx3MpLn", "Wx3MpLn"}, []string{"sh", "-c"}},
	{"quoted-two-words-separate", []string{"sh", "-c", `train --token "Lz3Kw Tq8XmVp" --lr 0.1`}, []string{"Lz3Kw Tq8XmVp", "Tq8XmVp"}, []string{"sh", "-c"}},
	{"mysql-attached-password", []string{"mysql", "-u", "root", "-pMw8TzKq3XmLp", "ml"}, []string{"Mw8TzKq3XmLp"}, []string{"mysql", "-u", "root", "ml"}},
	{"jwt-flag", []string{"client", "--jwt", jwt}, []string{jwt}, []string{"client", "--jwt"}},
	{"jwt-query", []string{"curl", "https://api.example.com/ws?jwt=" + jwt}, []string{jwt}, []string{"curl"}},
	{"jwt-positional", []string{"client", "connect", jwt}, []string{jwt}, []string{"client", "connect"}},
	{"bearer-flag", []string{"client", "--bearer", "Nq3XzTw8KmLp"}, []string{"Nq3XzTw8KmLp"}, []string{"client", "--bearer"}},
	{"pwd-flag", []string{"client", "--pwd", "Px8KwTq3ZmVn"}, []string{"Px8KwTq3ZmVn"}, []string{"client", "--pwd"}},
	{"pw-flag", []string{"client", "--pw", "Qz3TwKx8MpLn"}, []string{"Qz3TwKx8MpLn"}, []string{"client", "--pw"}},
	{"json-pass-key", []string{"app", `--config={"user":"u","pass":"Rw8KzTq3XmVp"}`}, []string{"Rw8KzTq3XmVp"}, []string{"app"}},
	{"json-pwd-key", []string{"app", `{"pwd": "Sx3TqKw8MpLn"}`}, []string{"Sx3TqKw8MpLn"}, []string{"app"}},
	{"slack-webhook", []string{"notify", "https://hooks.slack.com/services/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"}, []string{"Tz8KwXq3MpLnVr4ZqWx9TmKb"}, []string{"notify"}},
	{"discord-webhook", []string{"notify", "--url", "https://discord.com/api/webhooks/1234567890123/Uw3KzTq8XmPvLn9ZqWx4TmKbNp2Vz"}, []string{"Uw3KzTq8XmPvLn9ZqWx4TmKbNp2Vz"}, []string{"notify", "--url"}},
	{"slack-bot-token", []string{"notify", "--channel", "ml", "xoxb-1234567890-0987654321-Vz8TqKw3XmLpNr"}, []string{"xoxb-1234567890-0987654321-Vz8TqKw3XmLpNr"}, []string{"notify", "--channel", "ml"}},
	{"github-token-positional", []string{"gh-release", "ghp_Wq3KzTx8MpLnVr4ZqWx9TmKbNp2VzQkLw7Tz"}, []string{"ghp_Wq3KzTx8MpLnVr4ZqWx9TmKbNp2VzQkLw7Tz"}, []string{"gh-release"}},
	{"access-key-id-positional", []string{"sync", "AKIAXZTQKWMPLVNRB3Q7", "s3://bucket/data"}, []string{"AKIAXZTQKWMPLVNRB3Q7"}, []string{"sync", "s3://bucket/data"}},
	{"rdzv-endpoint-userinfo", []string{"torchrun", "--nnodes=2", "--rdzv-backend=c10d", "--rdzv-endpoint=etcd:Xw8TzKq3MpLn@etcd.example.com:2379", "train.py"}, []string{"Xw8TzKq3MpLn"}, []string{"torchrun", "--nnodes=2", "--rdzv-backend=c10d", "train.py"}},
	{"userinfo-no-scheme-positional", []string{"connect", "admin:Yz3KwTq8XmVp@db.example.com:5432"}, []string{"Yz3KwTq8XmVp"}, []string{"connect"}},
}, tokenForms()...)

// Token is a credential its issuer marks with a prefix, in the form the
// issuer documents (docs/redaction.md has each source); the secrets are
// made up, but for the issuers' own published examples.
type Token struct{ Issuer, Prefix, Secret string }

// Value is the token as it is written.
func (t Token) Value() string { return t.Prefix + t.Secret }

// Tokens are the token formats redaction knows by their shape alone.
var Tokens = []Token{
	// NVIDIA NeMo Retriever "Authentication and API keys": keys from build.nvidia.com start with nvapi-, as NGC personal keys do.
	{"nvidia", "nvapi-", "orzbnpAXMaS4rUxWm5btU97eyagCxC3Zg8AHNusWeECrMvMaXW8cSn_Q-QFQZRz4"},
	// Vault "Tokens", "Token formats": its own examples of a service and a batch token.
	{"vault-service", "hvs.", "R0670sAqZnKX3yW40NddrPVk"},
	{"vault-batch", "hvb.", "aYnhlZjetM09MRRc11FSLVk1"},
	// GitLab "GitLab token overview", "Token prefixes": every prefix of the table.
	{"gitlab-personal", "glpat-", "v4tzSxFiJCemuUZtq3VX"},
	{"gitlab-oauth-secret", "gloas-", "Hn84Njm_kyvtmchoMe8pdgS9hg3E9LE5xsToivmtKe6fEetbKg4mozjTGiw6jRoD"},
	{"gitlab-deploy", "gldt-", "8VnwwMDy3d6FqEwbPzJ9"},
	{"gitlab-runner", "glrt-", "Mes5o39aJUHx6byBpYfM"},
	{"gitlab-ci-job", "glcbt-", "64_5ThiSv25quvg5u-tHFhj"},
	{"gitlab-trigger", "glptt-", "c6exnRKQpRkszaHbbPtSXYFoy3kE8QXivxoDyxWe"},
	{"gitlab-feed", "glft-", "oGNCajTJLxHT6fMysMnE"},
	{"gitlab-incoming-mail", "glimt-", "MxrZS7Khf_YkJsnFqEEfjQQzf"},
	{"gitlab-agent", "glagent-", "afGnySWwF-FH6Yh6zYZC9g9J4Wq67Z4At4STTxPvGeouemg-kK"},
	{"gitlab-workspace", "glwt-", "p2-7Yc5UYwMrKuPd_ihs"},
	{"gitlab-scim", "glsoat-", "p7_XGXpj-7cGKCcT7SXz"},
	{"gitlab-feature-flags", "glffct-", "tEagCudtU74akuLPxFGc"},
	{"gitlab-session", "_gitlab_session=", "eb2e2d9d53fb7e8e2ecf1f09f5ebb10b"},
	// Docker Hub API reference, "Create access token": a personal access token as the secret, dckr_pat_...
	{"docker", "dckr_pat_", "G8R9EPEbZdTNDfECVgUrcfc9onB"},
	// Google OAuth 2.0 access tokens as `gcloud auth print-access-token` prints them (Google calls the format opaque).
	{"google-oauth", "ya29.", "a0Afop7WdB_WsaQBgjAfmp5QnMuqXD9q8kpukPgAkwVyaPTgPodPkWATAwVULjna"},
	// Slack "Token types": app-level tokens begin with xapp-.
	{"slack-app", "xapp-", "1-A0VYEZOEJMC-t5wSx27oC86HdWVV96cbFRJRhMocSS8PXLP4gJSP"},
	// Databricks "Authenticate with personal access tokens": dapi and 32 hex digits, as its .netrc example.
	{"databricks", "dapi", "6e8d8fdbc82d17e5d39fa3d21d10acae"},
	// Stripe API reference "Authentication": its sample test key; "API keys": live secret and restricted keys.
	{"stripe-test", "sk_test_", "BQokikJOvBiI2HlWgH4olfQ2"},
	{"stripe-live", "sk_live_", "PhpBYnEU2Zes8jru4wfqzj5x"},
	{"stripe-restricted", "rk_live_", "gaSZsEqHrBozdyACjYuSt5bB"},
	// OpenAI "Authentication": project keys; Anthropic's keys as its Console issues them. Both are sk- keys.
	{"openai-project", "sk-proj-", "Tz8KqWx3MpLnVr6KzQw9TxBm3PvNk7WzLq5XtRmZq4Tk8XwMp2VnLr6KzQw9TxBm"},
	{"anthropic", "sk-ant-", "api03-Kq7TzWx2MpVnLr6KzQw9TxBm3Pvk7WzLq5XtRmZq4Tk8XwMp2VnLr6KzQw9TxBm-Zq4TkAA"},
	// Hugging Face "User access tokens"; GitHub "GitHub's token formats".
	{"huggingface", "hf_", "KqWxTzMpLnVrKzQwTxBmPvNkWzLqXtRmZq"},
	{"github-oauth", "gho_", "Kq7TzWx2MpVnLr6KzQw9TxBm3Pvk7WzLq5Xt"},
	{"github-fine-grained", "github_pat_", "11ABCDEFG0Kq7TzWx2MpVnLr6_KzQw9TxBm3Pvk7WzLq5XtRmZq4Tk8XwMp2VnLr6KzQw9TxBm"},
}

// tokenForms puts each token where only its shape gives it away: a
// positional argument after a flag that names no credential.
func tokenForms() []Form {
	var out []Form
	for _, tok := range Tokens {
		out = append(out, Form{"token-" + tok.Issuer, []string{"python", "job.py", "--run", "nightly", tok.Value()}, []string{tok.Secret},
			[]string{"python", "job.py", "--run", "nightly"}})
	}
	return out
}

// Kept are commands that hold no credential: redaction must leave them
// exactly as they are, so a record still tells one run from another.
var Kept = [][]string{
	{"python", "-u", "train.py", "--lr=0.1", "--epochs", "3"},
	{"torchrun", "--nproc_per_node=8", "--rdzv-endpoint=master-0:29400", "train.py"},
	{"docker", "login", "r.example.com"},
	{"git", "clone", "git@git.example.com:o/r.git"},
	{"curl", "https://example.com/data?split=train&page=2"},
	{"python", "run.py", "--image=registry.example/ml/train:2.3@sha256:4f1c2d1b7f8e3a9c0d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4"},
	{"python", "train.py", "--revision", "9c1e5d27a3b4c5d6e7f8091a2b3c4d5e6f708192"},
	{"python", "train.py", "--output_dir=/data/out", "--report_to", "wandb", "--email", "ops@example.com"},
}
