#define _GNU_SOURCE /* accept4 */
#include "net/httpd.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

/* A connection reads a request head, writes the whole answer, then either
 * reads the next request (keep-alive) or half-closes and drains what the
 * client still sends until it closes too (a close() with unread input would
 * reset the connection and could destroy the answer in the client's buffer). */
enum conn_state { C_READING, C_WRITING, C_DRAINING };

struct conn {
    int fd;                      /* -1: free slot */
    enum conn_state state;
    double deadline;             /* monotonic seconds: closed when reached */
    double moved;                /* when it last moved (accepted, a request head begun, a
                                  * byte of the answer taken by the client, the answer
                                  * done): the longest still is evicted first */
    char in[BT_HTTPD_MAX_REQ + 1];
    size_t inlen;
    struct bt_buf out;           /* the response head (and a per-request body) */
    struct bt_httpd_body *body;  /* a shared body sent after out, NULL none */
    size_t body_len;             /* bytes of body to send: 0 for HEAD and 304 */
    size_t sent;                 /* of out, then of body */
    bool keep;                   /* keep the connection open after this answer */
};

struct bt_httpd {
    int lfd, ep;
    bool loopback;
    char addr[80];
    bt_httpd_handler handler;
    void *arg;
    struct conn c[BT_HTTPD_MAX_CONN];
};

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static bool is_loopback(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *)(const void *)sa)->sin_addr.s_addr) >> 24) == 127;
    if (sa->sa_family == AF_INET6) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
        return IN6_IS_ADDR_LOOPBACK(a) ||
               (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
    }
    return false;
}

/* "ADDR:PORT", "[V6]:PORT", ":PORT", "PORT" -> host (empty: loopback) and port. */
static bool split_listen(const char *s, char *host, size_t hn, char *port, size_t pn)
{
    const char *colon;
    if (s[0] == '[') {
        const char *end = strchr(s, ']');
        if (!end || end[1] != ':')
            return false;
        snprintf(host, hn, "%.*s", (int)(end - s - 1), s + 1);
        colon = end + 1;
    } else {
        colon = strrchr(s, ':');
        if (!colon) {
            host[0] = '\0';
            if (bt_strlcpy(port, s, pn) >= pn)
                return false;
            goto check_port;
        }
        snprintf(host, hn, "%.*s", (int)(colon - s), s);
    }
    snprintf(port, pn, "%s", colon + 1);
check_port:
    if (!port[0] || strlen(port) > 5)
        return false;
    for (const char *p = port; *p; p++)
        if (!isdigit((unsigned char)*p))
            return false;
    long v = strtol(port, NULL, 10);
    return v >= 0 && v <= 65535;
}

struct bt_httpd *bt_httpd_new(const char *listen_at, bt_httpd_handler h, void *arg, char *err,
                              size_t errlen)
{
    char host[64], port[8];
    if (!listen_at)
        listen_at = BT_HTTPD_DEFAULT_LISTEN;
    if (!split_listen(listen_at, host, sizeof host, port, sizeof port)) {
        snprintf(err, errlen, "--listen '%.80s': not ADDR:PORT (e.g. 127.0.0.1:9464)", listen_at);
        return NULL;
    }
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
    struct addrinfo *ai = NULL;
    bool numeric = true;
    int gr = getaddrinfo(host[0] ? host : "127.0.0.1", port,
                         &(struct addrinfo){.ai_socktype = SOCK_STREAM,
                                            .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV},
                         &ai);
    if (gr == EAI_NONAME) {
        numeric = false;
        gr = getaddrinfo(host, port, &hints, &ai);
    }
    if (gr != 0 || !ai) {
        snprintf(err, errlen, "--listen '%.80s': %s", listen_at, gai_strerror(gr));
        return NULL;
    }
    if (!numeric && !is_loopback(ai->ai_addr)) {
        snprintf(err, errlen,
                 "--listen '%.80s': the name resolves to an address off this host; "
                 "name the address itself (e.g. --listen 0.0.0.0:%s) to serve other hosts",
                 listen_at, port);
        freeaddrinfo(ai);
        return NULL;
    }
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    if (fd >= 0)
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (fd < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, 32) != 0) {
        snprintf(err, errlen, "--listen '%.80s': %s", listen_at, strerror(errno));
        if (fd >= 0)
            close(fd);
        freeaddrinfo(ai);
        return NULL;
    }
    struct bt_httpd *s = bt_xcalloc(1, sizeof *s);
    s->lfd = fd;
    s->loopback = is_loopback(ai->ai_addr);
    s->handler = h;
    s->arg = arg;
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    char ip[INET6_ADDRSTRLEN] = "?";
    int bound_port = 0;
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0) {
        if (ss.ss_family == AF_INET) {
            struct sockaddr_in *in = (struct sockaddr_in *)&ss;
            inet_ntop(AF_INET, &in->sin_addr, ip, sizeof ip);
            bound_port = ntohs(in->sin_port);
        } else {
            struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
            inet_ntop(AF_INET6, &in6->sin6_addr, ip, sizeof ip);
            bound_port = ntohs(in6->sin6_port);
        }
    }
    snprintf(s->addr, sizeof s->addr, ss.ss_family == AF_INET6 ? "[%s]:%d" : "%s:%d", ip,
             bound_port);
    freeaddrinfo(ai);
    for (int i = 0; i < BT_HTTPD_MAX_CONN; i++)
        s->c[i].fd = -1;
    s->ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
    if (s->ep < 0 || epoll_ctl(s->ep, EPOLL_CTL_ADD, fd, &ev) != 0) {
        snprintf(err, errlen, "epoll: %s", strerror(errno));
        bt_httpd_free(s);
        return NULL;
    }
    return s;
}

int bt_httpd_fd(const struct bt_httpd *s)
{
    return s->ep;
}

const char *bt_httpd_address(const struct bt_httpd *s)
{
    return s->addr;
}

bool bt_httpd_loopback(const struct bt_httpd *s)
{
    return s->loopback;
}

struct bt_httpd_body {
    unsigned refs;
    struct bt_buf b;
};

struct bt_httpd_body *bt_httpd_body_take(struct bt_buf *b)
{
    struct bt_httpd_body *h = bt_xcalloc(1, sizeof *h);
    h->refs = 1;
    h->b = *b;
    *b = (struct bt_buf){0};
    return h;
}

void bt_httpd_body_unref(struct bt_httpd_body *h)
{
    if (h && --h->refs == 0) {
        bt_buf_free(&h->b);
        free(h);
    }
}

size_t bt_httpd_body_len(const struct bt_httpd_body *h)
{
    return h->b.len;
}

const char *bt_httpd_body_data(const struct bt_httpd_body *h)
{
    return h->b.buf ? h->b.buf : "";
}

static void conn_drop_body(struct conn *c)
{
    bt_httpd_body_unref(c->body);
    c->body = NULL;
    c->body_len = 0;
}

static void conn_close(struct bt_httpd *s, struct conn *c)
{
    epoll_ctl(s->ep, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    c->fd = -1;
    bt_buf_free(&c->out);
    conn_drop_body(c);
}

/* Evicted, or a writer past its deadline: reset (as nginx's reset_timedout_connection),
 * so the answer its client would not read is dropped now rather than kept queued by
 * the kernel, retried into a closed window for minutes after the close. */
static void conn_abort(struct bt_httpd *s, struct conn *c)
{
    struct linger lg = {.l_onoff = 1, .l_linger = 0};
    if (c->state == C_WRITING)
        setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    conn_close(s, c);
}

static const char *reason(int status)
{
    switch (status) {
    case 200: return "OK";
    case 304: return "Not Modified";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 414: return "URI Too Long";
    case 431: return "Request Header Fields Too Large";
    case 503: return "Service Unavailable";
    default: return "Error";
    }
}

/* The value of header `name` in the request head (first match), "" if none. */
static void header(const char *head, const char *name, char *out, size_t n)
{
    out[0] = '\0';
    size_t nl = strlen(name);
    for (const char *p = strstr(head, "\r\n"); p; p = strstr(p + 2, "\r\n")) {
        const char *line = p + 2;
        if (strncasecmp(line, name, nl) == 0 && line[nl] == ':') {
            const char *v = line + nl + 1;
            while (*v == ' ' || *v == '\t')
                v++;
            const char *e = strstr(v, "\r\n");
            size_t len = e ? (size_t)(e - v) : strlen(v);
            snprintf(out, n, "%.*s", (int)len, v);
            return;
        }
    }
}

/* The response head into c->out, then the body: len bytes of data (copied:
 * the small answers) or of shared (sent from where it is). Content-Length is
 * len also for HEAD and 304, whose body is not sent. A 304 carries the
 * validators and Vary but no Content-Type or Content-Length (RFC 9110 15.4.5). */
struct answer {
    int status;
    const char *ctype, *allow, *vary, *etag;
    int64_t last_modified;
    const char *data;
    struct bt_httpd_body *shared;
    size_t len;
    bool gz, head_only;
};

static void respond(struct conn *c, const struct answer *a)
{
    bt_buf_reset(&c->out);
    conn_drop_body(c);
    bt_buf_printf(&c->out, "HTTP/1.1 %d %s\r\n", a->status, reason(a->status));
    if (a->status != 304)
        bt_buf_printf(&c->out, "Content-Type: %s\r\nContent-Length: %zu\r\n", a->ctype, a->len);
    /* no-cache, not no-store: a cache may keep an answer that carries a
     * validator, and must revalidate it (a 304) before reusing it */
    bt_buf_printf(&c->out, "Connection: %s\r\nCache-Control: %s\r\n",
                  c->keep ? "keep-alive" : "close",
                  a->etag || a->last_modified ? "no-cache" : "no-store");
    if (a->gz && a->status != 304)
        bt_buf_puts(&c->out, "Content-Encoding: gzip\r\n");
    if (a->vary || a->gz)
        bt_buf_printf(&c->out, "Vary: %s\r\n", a->vary ? a->vary : "Accept-Encoding");
    if (a->etag)
        bt_buf_printf(&c->out, "ETag: %s\r\n", a->etag);
    if (a->last_modified > 0) {
        char d[40];
        bt_httpd_fmt_date(a->last_modified, d, sizeof d);
        bt_buf_printf(&c->out, "Last-Modified: %s\r\n", d);
    }
    if (a->allow)
        bt_buf_printf(&c->out, "Allow: %s\r\n", a->allow);
    bt_buf_puts(&c->out, "\r\n");
    bool send_body = !a->head_only && a->status != 304;
    if (send_body && a->shared) {
        c->body = a->shared;
        c->body->refs++;
        c->body_len = a->len;
    } else if (send_body && a->data) {
        bt_buf_add(&c->out, a->data, a->len);
    }
    c->sent = 0;
}

static void simple(struct conn *c, int status, const char *text)
{
    struct bt_buf b = {0};
    bt_buf_printf(&b, "%s\n", text);
    respond(c, &(struct answer){.status = status, .ctype = "text/plain; charset=utf-8",
                                .data = b.buf, .len = b.len});
    bt_buf_free(&b);
}

static bool has_token(const char *h, const char *tok)
{
    size_t tl = strlen(tok);
    for (const char *p = h; *p;) {
        while (*p == ' ' || *p == '\t' || *p == ',')
            p++;
        size_t n = strcspn(p, ",");
        size_t m = n;
        while (m > 0 && (p[m - 1] == ' ' || p[m - 1] == '\t'))
            m--;
        if (m == tl && strncasecmp(p, tok, tl) == 0)
            return true;
        p += n;
    }
    return false;
}

/* The header lines after the request line: each a field name of token characters,
 * the colon right after it and a value without CR or LF (RFC 9112 5.1: whitespace
 * before the colon is refused, 5.2: so is a folded line); and the framing (6.1 to
 * 6.3): every Content-Length one run of digits, all of them equal, none beside a
 * Transfer-Encoding, so no byte of a body is ever read as the next request (curl and
 * nginx refuse the same). 0 or 400; *body: the request has one (not read: the
 * connection closes after the answer). */
static int header_lines(const char *head, bool *body)
{
    static const char tchar[] = "!#$%&'*+-.^_`|~0123456789"
                                "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    const char *cl = NULL; /* the Content-Length digits, leading zeros dropped */
    size_t cll = 0;
    bool te = false;
    *body = false;
    for (const char *p = strstr(head, "\r\n"); p && p[2];) {
        const char *line = p + 2, *e = strstr(line, "\r\n");
        size_t len = e ? (size_t)(e - line) : strlen(line);
        size_t nl = strspn(line, tchar);
        if (nl == 0 || nl >= len || line[nl] != ':' || memchr(line, '\r', len) ||
            memchr(line, '\n', len))
            return 400;
        const char *v = line + nl + 1, *ve = line + len;
        while (v < ve && (*v == ' ' || *v == '\t'))
            v++;
        while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
            ve--;
        size_t vl = (size_t)(ve - v);
        if (nl == 14 && !strncasecmp(line, "Content-Length", 14)) {
            if (vl == 0 || strspn(v, "0123456789") != vl)
                return 400;
            while (vl > 1 && *v == '0')
                v++, vl--;
            if (cl && (vl != cll || memcmp(v, cl, vl) != 0))
                return 400;
            cl = v;
            cll = vl;
        } else if (nl == 17 && !strncasecmp(line, "Transfer-Encoding", 17)) {
            te = true;
        }
        p = e;
    }
    if (cl && te)
        return 400;
    *body = te || (cl && !(cll == 1 && cl[0] == '0'));
    return 0;
}

int bt_httpd_parse(const char *head, struct bt_httpd_req *req)
{
    memset(req, 0, sizeof *req);
    const char *eol = strstr(head, "\r\n");
    size_t n = eol ? (size_t)(eol - head) : strlen(head);
    /* request line: METHOD SP TARGET SP HTTP/1.x */
    const char *sp1 = memchr(head, ' ', n);
    const char *sp2 = sp1 ? memchr(sp1 + 1, ' ', n - (size_t)(sp1 + 1 - head)) : NULL;
    if (!sp1 || !sp2 || sp1 == head || sp2 == sp1 + 1 || (size_t)(sp1 - head) >= sizeof req->method ||
        (size_t)(head + n - sp2 - 1) != 8 || strncmp(sp2 + 1, "HTTP/1.", 7) != 0 ||
        (sp2[8] != '0' && sp2[8] != '1'))
        return 400;
    memcpy(req->method, head, (size_t)(sp1 - head));
    const char *target = sp1 + 1;
    size_t tl = (size_t)(sp2 - target);
    const char *q = memchr(target, '?', tl);
    if (q)
        tl = (size_t)(q - target);
    if (tl >= sizeof req->path || target[0] != '/')
        return tl >= sizeof req->path ? 414 : 400;
    memcpy(req->path, target, tl);
    header(head, "Accept", req->accept, sizeof req->accept);
    char ae[256];
    header(head, "Accept-Encoding", ae, sizeof ae);
    req->gzip = bt_httpd_accepts_gzip(ae);
    header(head, "If-None-Match", req->if_none_match, sizeof req->if_none_match);
    char ims[64];
    header(head, "If-Modified-Since", ims, sizeof ims);
    req->if_modified_since = ims[0] ? bt_httpd_parse_date(ims) : -1;
    /* persistent as RFC 9112 9.3 says (1.1 unless "close"; 1.0 only with
     * "keep-alive"), but never after a request with a body: it is not read, so
     * its bytes would be taken for the next request */
    bool body;
    if (header_lines(head, &body) != 0)
        return 400;
    char conn[256];
    header(head, "Connection", conn, sizeof conn);
    req->keep_alive = !body && (sp2[8] == '1' ? !has_token(conn, "close")
                                              : has_token(conn, "keep-alive"));
    if (strcmp(req->method, "GET") != 0 && strcmp(req->method, "HEAD") != 0)
        return 405;
    return 0;
}

/* Answers the complete request head at the start of c->in (hlen bytes with
 * its blank line); what follows it (a pipelined request) stays in c->in. */
static void handle(struct bt_httpd *s, struct conn *c, size_t hlen)
{
    char head[BT_HTTPD_MAX_REQ + 1];
    memcpy(head, c->in, hlen - 2); /* keep the last header's CRLF: header() looks for it */
    head[hlen - 2] = '\0';
    memmove(c->in, c->in + hlen, c->inlen - hlen);
    c->inlen -= hlen;
    c->in[c->inlen] = '\0';
    struct bt_httpd_req req;
    int st = bt_httpd_parse(head, &req);
    c->keep = st == 0 && req.keep_alive;
    if (st == 405) {
        static const char only[] = "only GET and HEAD\n";
        respond(c, &(struct answer){.status = 405, .ctype = "text/plain; charset=utf-8",
                                    .data = only, .len = sizeof only - 1, .allow = "GET, HEAD"});
        return;
    }
    if (st) {
        simple(c, st, st == 414 ? "request target too long" : "bad request");
        return;
    }
    bool head_only = !strcmp(req.method, "HEAD");
    struct bt_buf body = {0};
    struct bt_httpd_resp resp = {.status = 404, .content_type = "text/plain; charset=utf-8",
                                 .body = &body};
    s->handler(s->arg, &req, &resp);
    struct answer a = {.status = resp.status, .ctype = resp.content_type, .allow = resp.allow,
                       .vary = resp.vary, .etag = resp.etag[0] ? resp.etag : NULL,
                       .last_modified = resp.last_modified, .head_only = head_only};
    /* RFC 9110 13.2.2: If-None-Match decides when sent; If-Modified-Since only without it */
    if (a.status == 200 && ((req.if_none_match[0] && a.etag &&
                             bt_httpd_etag_matches(req.if_none_match, a.etag)) ||
                            (!req.if_none_match[0] && a.last_modified > 0 &&
                             req.if_modified_since >= a.last_modified)))
        a.status = 304;
    struct bt_buf gz = {0};
    if (resp.shared) {
        a.shared = resp.shared;
        a.len = bt_httpd_body_len(resp.shared);
        a.gz = resp.shared_gzip;
    } else if (req.gzip && body.len > 0 && a.status != 304 && bt_gzip(body.buf, body.len, &gz)) {
        a.data = gz.buf;
        a.len = gz.len;
        a.gz = true;
    } else {
        a.data = body.buf;
        a.len = body.len;
    }
    respond(c, &a);
    bt_buf_free(&gz);
    bt_buf_free(&body);
}

static void set_events(struct bt_httpd *s, struct conn *c, uint32_t events)
{
    struct epoll_event ev = {.events = events, .data.ptr = c};
    epoll_ctl(s->ep, EPOLL_CTL_MOD, c->fd, &ev);
}

/* A complete request head in c->in: answer it and start writing. false: none yet. */
static bool take_request(struct bt_httpd *s, struct conn *c)
{
    /* bytes, not a string: a NUL must neither hide the head's end nor pass as its end */
    char *end = memmem(c->in, c->inlen, "\r\n\r\n", 4);
    size_t upto = end ? (size_t)(end + 4 - c->in) : c->inlen;
    if (memchr(c->in, '\0', upto)) { /* RFC 9112 2.2: no NUL in a head; refused at once */
        c->inlen = 0;
        c->keep = false;
        simple(c, 400, "bad request: a NUL byte in the request head");
    } else if (!end) {
        if (memmem(c->in, c->inlen, "\n\n", 2)) { /* bare LF lines: refused, not waited on */
            c->inlen = 0;
            c->keep = false;
            simple(c, 400, "bad request: header lines must end in CRLF");
        } else if (c->inlen >= BT_HTTPD_MAX_REQ) {
            c->keep = false;
            simple(c, 431, "request larger than 8192 bytes");
        } else {
            return false;
        }
    } else {
        handle(s, c, (size_t)(end + 4 - c->in));
    }
    c->state = C_WRITING;
    c->moved = mono();
    c->deadline = c->moved + BT_HTTPD_IDLE_S; /* the client has this long to read the answer */
    set_events(s, c, EPOLLOUT);
    return true;
}

static void conn_write(struct bt_httpd *s, struct conn *c);

static void conn_read(struct bt_httpd *s, struct conn *c)
{
    for (;;) {
        if (c->state == C_DRAINING) {
            char junk[4096];
            ssize_t n = read(c->fd, junk, sizeof junk);
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
                return;
            if (n <= 0) {
                conn_close(s, c); /* the client closed too: no reset */
                return;
            }
            continue;
        }
        ssize_t n = read(c->fd, c->in + c->inlen, BT_HTTPD_MAX_REQ - c->inlen);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
            return;
        if (n <= 0) {
            conn_close(s, c);
            return;
        }
        if (c->inlen == 0) { /* a new request: its head must arrive within BT_HTTPD_IDLE_S */
            c->moved = mono();
            c->deadline = c->moved + BT_HTTPD_IDLE_S;
        }
        c->inlen += (size_t)n;
        c->in[c->inlen] = '\0';
        if (take_request(s, c)) {
            conn_write(s, c);
            return;
        }
    }
}

static void conn_write(struct bt_httpd *s, struct conn *c)
{
    size_t total = c->out.len + c->body_len;
    while (c->sent < total) {
        /* the head, then the shared body from where it lies: one sendmsg for both */
        struct iovec iov[2];
        int k = 0;
        if (c->sent < c->out.len)
            iov[k++] = (struct iovec){c->out.buf + c->sent, c->out.len - c->sent};
        size_t boff = c->sent > c->out.len ? c->sent - c->out.len : 0;
        if (c->body_len > boff)
            iov[k++] = (struct iovec){(char *)(uintptr_t)bt_httpd_body_data(c->body) + boff,
                                      c->body_len - boff};
        struct msghdr mh = {.msg_iov = iov, .msg_iovlen = (size_t)k};
        ssize_t n = sendmsg(c->fd, &mh, MSG_NOSIGNAL);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
            return;
        if (n <= 0) {
            conn_close(s, c);
            return;
        }
        c->sent += (size_t)n;
        c->moved = mono(); /* the client reads: not the slowest writer */
    }
    bt_buf_reset(&c->out);
    conn_drop_body(c);
    c->sent = 0;
    double now = mono();
    if (c->keep) {
        c->state = C_READING;
        c->moved = now;
        c->deadline = now + BT_HTTPD_KEEPALIVE_S;
        if (c->inlen > 0 && take_request(s, c)) { /* pipelined */
            conn_write(s, c);
            return;
        }
        if (c->inlen > 0)
            c->deadline = now + BT_HTTPD_IDLE_S;
        set_events(s, c, EPOLLIN);
        return;
    }
    /* lingering close, as Apache and nginx do: half-close, then read until the
     * client closes (or BT_HTTPD_LINGER_S) so the answer is not reset away */
    shutdown(c->fd, SHUT_WR);
    c->state = C_DRAINING;
    c->moved = now;
    c->deadline = now + BT_HTTPD_LINGER_S;
    set_events(s, c, EPOLLIN);
    conn_read(s, c);
}

/* The slot a new connection takes when all are in use: one that has answered and
 * lingers, else the one that has gone longest without moving, whatever it waits on:
 * the longest idle between requests, the oldest unfinished request head (one byte at
 * a time does not count as moving), or the slowest writer, whose client has taken
 * no byte of its answer for longest (one that pipelines requests and never reads
 * stalls there). Never NULL when every slot is in use: a scrape always gets a slot. */
static struct conn *evictable(struct bt_httpd *s)
{
    struct conn *best = NULL;
    for (int i = 0; i < BT_HTTPD_MAX_CONN; i++) {
        struct conn *c = &s->c[i];
        if (c->fd < 0)
            continue;
        bool lingers = c->state == C_DRAINING, best_lingers = best && best->state == C_DRAINING;
        if (!best || (lingers && !best_lingers) ||
            (lingers == best_lingers && c->moved < best->moved))
            best = c;
    }
    return best;
}

static void accept_all(struct bt_httpd *s)
{
    for (;;) {
        int fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;
        struct conn *c = NULL;
        for (int i = 0; i < BT_HTTPD_MAX_CONN && !c; i++)
            if (s->c[i].fd < 0)
                c = &s->c[i];
        if (!c) {
            c = evictable(s); /* every slot is in use: never NULL */
            if (!c) {
                close(fd);
                continue;
            }
            conn_abort(s, c); /* idle and stalled clients never starve a scrape */
        }
        /* the kernel queues at most this much of an answer a client does not read
         * (autotuned, it grows to 4 MB a connection: 256 MB for 64 stalled slots) */
        int sndbuf = BT_HTTPD_SNDBUF;
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
        c->fd = fd;
        c->state = C_READING;
        c->inlen = 0;
        c->in[0] = '\0';
        c->sent = 0;
        c->keep = false;
        c->moved = mono();
        c->deadline = c->moved + BT_HTTPD_IDLE_S;
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
        if (epoll_ctl(s->ep, EPOLL_CTL_ADD, fd, &ev) != 0) {
            close(fd);
            c->fd = -1;
        }
    }
}

void bt_httpd_expire(struct bt_httpd *s)
{
    double now = mono();
    for (int i = 0; i < BT_HTTPD_MAX_CONN; i++)
        if (s->c[i].fd >= 0 && now >= s->c[i].deadline)
            conn_abort(s, &s->c[i]);
}

void bt_httpd_run(struct bt_httpd *s)
{
    struct epoll_event evs[16];
    int n = epoll_wait(s->ep, evs, 16, 0);
    for (int i = 0; i < n; i++) {
        struct conn *c = evs[i].data.ptr;
        if (!c) {
            accept_all(s);
            continue;
        }
        if (c->fd < 0)
            continue;
        if (c->state == C_WRITING)
            conn_write(s, c);
        else
            conn_read(s, c);
    }
    bt_httpd_expire(s);
}

int bt_httpd_next_ms(const struct bt_httpd *s)
{
    double next = -1, now = mono();
    for (int i = 0; i < BT_HTTPD_MAX_CONN; i++)
        if (s->c[i].fd >= 0 && (next < 0 || s->c[i].deadline < next))
            next = s->c[i].deadline;
    if (next < 0)
        return -1;
    return next <= now ? 0 : (int)((next - now) * 1000) + 1;
}

void bt_httpd_free(struct bt_httpd *s)
{
    if (!s)
        return;
    for (int i = 0; i < BT_HTTPD_MAX_CONN; i++)
        if (s->c[i].fd >= 0)
            conn_close(s, &s->c[i]);
    if (s->ep >= 0)
        close(s->ep);
    if (s->lfd >= 0)
        close(s->lfd);
    free(s);
}
