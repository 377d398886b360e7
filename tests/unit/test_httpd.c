/* bedtop serve's HTTP server (net/httpd.c) over real loopback sockets, driven from
 * this one thread as the loop drives it: the slots under clients that pipeline and
 * never read, requests holding a NUL byte, and request framing (Content-Length) that
 * would let a body be answered as a second request (issue 37, breaks 1 and 15).
 * Nothing here waits on a clock: the server is run until no socket is ready, and the
 * test then looks at what each client has received. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "net/httpd.h"
#include "core/util.h"
#include "tests/tap.h"

#define BIG (256 * 1024) /* /metrics: more than a non-reading client's buffers hold */

static struct bt_httpd_body *big;

static void handler(void *arg, const struct bt_httpd_req *req, struct bt_httpd_resp *resp)
{
    (void)arg;
    resp->content_type = "text/plain; charset=utf-8";
    if (!strcmp(req->path, "/metrics")) {
        resp->status = 200;
        resp->shared = big;
    } else if (!strcmp(req->path, "/a") || !strcmp(req->path, "/b")) {
        resp->status = 200;
        bt_buf_printf(resp->body, "%s\n", req->path);
    } else {
        resp->status = 404;
        bt_buf_puts(resp->body, "not found\n");
    }
}

/* Runs the server until no socket of it is ready (three empty rounds in a row). */
static void pump(struct bt_httpd *s)
{
    int quiet = 0;
    for (int i = 0; i < 100000 && quiet < 3; i++) {
        struct pollfd p = {.fd = bt_httpd_fd(s), .events = POLLIN};
        if (poll(&p, 1, 1) > 0) {
            bt_httpd_run(s);
            quiet = 0;
        } else {
            quiet++;
        }
    }
}

static int port_of(struct bt_httpd *s)
{
    const char *colon = strrchr(bt_httpd_address(s), ':');
    return colon ? atoi(colon + 1) : 0;
}

/* A non-blocking client socket connected to the server (rcvbuf > 0: that receive buffer). */
static int client(struct bt_httpd *s, int rcvbuf)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (rcvbuf > 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port_of(s))};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        return -1;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    return fd;
}

static void send_all(int fd, const char *data, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, data, n, MSG_NOSIGNAL);
        if (w <= 0)
            return;
        data += w;
        n -= (size_t)w;
    }
}

static void send_str(int fd, const char *s)
{
    send_all(fd, s, strlen(s));
}

/* Reads what the client has received into out, running the server between reads,
 * until the server closes the connection (true) or nothing more comes (false). */
static bool read_to_close(struct bt_httpd *s, int fd, struct bt_buf *out)
{
    for (int idle = 0; idle < 3;) {
        char buf[65536];
        ssize_t n = read(fd, buf, sizeof buf);
        if (n > 0) {
            bt_buf_add(out, buf, (size_t)n);
            idle = 0;
            continue;
        }
        if (n == 0 || (n < 0 && errno == ECONNRESET))
            return true;
        pump(s);
        idle++;
    }
    return false;
}

static int count_answers(struct bt_buf *b)
{
    int n = 0;
    for (const char *p = bt_buf_str(b); (p = strstr(p, "HTTP/1.1 ")); p++)
        n++;
    return n;
}

/* r4 break 1: 64 clients that pipeline GET /metrics and never read held every slot
 * (a slot that is writing was never evicted): every scrape got 503. */
static void test_pipelining_non_readers(void)
{
    char err[200];
    struct bt_httpd *s = bt_httpd_new("127.0.0.1:0", handler, NULL, err, sizeof err);
    OK(s != NULL, "server listens (%s)", s ? "" : err);
    if (!s)
        return;
    static const char req[] = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
    char pipeline[16 * sizeof req];
    size_t pl = 0;
    for (int k = 0; k < 16; k++) {
        memcpy(pipeline + pl, req, sizeof req - 1);
        pl += sizeof req - 1;
    }
    int hog[BT_HTTPD_MAX_CONN];
    for (int i = 0; i < BT_HTTPD_MAX_CONN; i++) {
        hog[i] = client(s, 4096);
        if (hog[i] >= 0)
            send_all(hog[i], pipeline, pl);
        pump(s); /* accepted in this order: hog[0] has gone longest without reading */
    }
    int deadline_ms = bt_httpd_next_ms(s);
    OK(deadline_ms > 0 && deadline_ms <= BT_HTTPD_IDLE_S * 1000 + 1,
       "64 stalled writers: each has a deadline (next in %d ms, at most %d s)", deadline_ms,
       BT_HTTPD_IDLE_S);

    int ok = 0;
    for (int k = 0; k < 20; k++) {
        int fd = client(s, 0);
        send_str(fd, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        struct bt_buf b = {0};
        bool closed = read_to_close(s, fd, &b);
        const char *body = strstr(bt_buf_str(&b), "\r\n\r\n");
        if (closed && !strncmp(bt_buf_str(&b), "HTTP/1.1 200 OK", 15) && body &&
            b.len - (size_t)(body + 4 - b.buf) == BIG)
            ok++;
        bt_buf_free(&b);
        close(fd);
    }
    OK(ok == 20, "r4 break 1: 64 pipelining non-readers hold every slot, 20 scrapes in a row "
                 "all answer 200 in full (%d of 20)", ok);

    /* an HTTP/1.1 client answered just now, idle on its kept-alive connection */
    int fresh = client(s, 0);
    send_str(fresh, "GET /a HTTP/1.1\r\nHost: x\r\n\r\n");
    pump(s);
    char got[512];
    ssize_t n = read(fresh, got, sizeof got - 1);
    got[n > 0 ? n : 0] = '\0';
    OK(n > 0 && !strncmp(got, "HTTP/1.1 200 OK", 15), "a client after them is answered: '%.15s'",
       got);

    /* 62 more that pipeline and never read: each takes the slot of a writer that has
     * stalled longer than the idle client has waited (hog[0] went for the first scrape) */
    int hog2[BT_HTTPD_MAX_CONN - 2];
    for (int i = 0; i < BT_HTTPD_MAX_CONN - 2; i++) {
        hog2[i] = client(s, 4096);
        if (hog2[i] >= 0)
            send_all(hog2[i], pipeline, pl);
        pump(s);
    }
    int gone = 0, alive = -1;
    for (int i = 0; i < BT_HTTPD_MAX_CONN; i++) {
        static char sink[1 << 20];
        ssize_t r;
        do
            r = recv(hog[i], sink, sizeof sink, 0);
        while (r > 0);
        bool closed = r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
        gone += closed;
        if (!closed)
            alive = i;
    }
    OK(gone == BT_HTTPD_MAX_CONN - 1 && alive == BT_HTTPD_MAX_CONN - 1,
       "the 63 writers stalled longest were evicted, in the order they stalled (%d; left: %d)",
       gone, alive);
    send_str(fresh, "GET /b HTTP/1.1\r\nHost: x\r\n\r\n");
    pump(s);
    n = read(fresh, got, sizeof got - 1);
    got[n > 0 ? n : 0] = '\0';
    OK(n > 0 && !strncmp(got, "HTTP/1.1 200 OK", 15) && strstr(got, "\r\n\r\n/b\n"),
       "the idle keep-alive client that read its answer kept its slot (a writer stalled "
       "longer went instead)");

    for (int i = 0; i < BT_HTTPD_MAX_CONN - 2; i++)
        if (hog2[i] >= 0)
            close(hog2[i]);
    close(fresh);
    for (int i = 0; i < BT_HTTPD_MAX_CONN; i++)
        if (hog[i] >= 0)
            close(hog[i]);
    bt_httpd_free(s);
}

/* One request as raw bytes on a fresh connection: everything sent back until close. */
static bool exchange(struct bt_httpd *s, const char *data, size_t n, struct bt_buf *out)
{
    int fd = client(s, 0);
    send_all(fd, data, n);
    pump(s);
    bool closed = read_to_close(s, fd, out);
    close(fd);
    return closed;
}

/* r4 break 15: a NUL byte went unanswered until the 10 s timeout; a malformed
 * Content-Length let the body be answered as a second request. */
static void test_framing(void)
{
    char err[200];
    struct bt_httpd *s = bt_httpd_new("127.0.0.1:0", handler, NULL, err, sizeof err);
    if (!s) {
        OK(false, "server listens: %s", err);
        return;
    }
    static const char nul[] = "GET /a HTTP/1.1\r\nHost: x\0y\r\n\r\n";
    struct bt_buf b = {0};
    bool closed = exchange(s, nul, sizeof nul - 1, &b);
    OK(closed && !strncmp(bt_buf_str(&b), "HTTP/1.1 400 ", 13),
       "r4 break 15: a NUL byte in a request head is answered 400 at once and closed "
       "('%.20s')", bt_buf_str(&b));
    bt_buf_reset(&b);
    static const char nul_early[] = "GET /a\0 HTTP/1.1\r\nHost: x\r\n";
    closed = exchange(s, nul_early, sizeof nul_early - 1, &b);
    OK(closed && !strncmp(bt_buf_str(&b), "HTTP/1.1 400 ", 13),
       "r4 break 15: ... also before the head is complete");

    /* the second request is the first one's body: it must never be answered */
    static const char *const smuggle[] = {
        "GET /a HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nContent-Length: 29\r\n\r\n"
        "GET /b HTTP/1.1\r\nHost: x\r\n\r\n",
        "GET /a HTTP/1.1\r\nHost: x\r\nContent-Length : 29\r\n\r\n"
        "GET /b HTTP/1.1\r\nHost: x\r\n\r\n",
        "GET /a HTTP/1.1\r\nHost: x\r\nContent-Length: 00000000000000000000000000000000029\r\n\r\n"
        "GET /b HTTP/1.1\r\nHost: x\r\n\r\n",
        "GET /a HTTP/1.1\r\nHost: x\r\nContent-Length: 0x1d\r\n\r\n"
        "GET /b HTTP/1.1\r\nHost: x\r\n\r\n",
        "GET /a HTTP/1.1\r\nHost: x\r\nContent-Length: 29\r\nTransfer-Encoding: chunked\r\n\r\n"
        "GET /b HTTP/1.1\r\nHost: x\r\n\r\n",
        "GET /a HTTP/1.1\r\nHost: x\r\nContent-Length:\r\n\r\n"
        "GET /b HTTP/1.1\r\nHost: x\r\n\r\n",
        "GET /a HTTP/1.1\r\nHost: x\r\n Content-Length: 29\r\n\r\n"
        "GET /b HTTP/1.1\r\nHost: x\r\n\r\n",
    };
    for (size_t i = 0; i < BT_ARRAY_LEN(smuggle); i++) {
        bt_buf_reset(&b);
        closed = exchange(s, smuggle[i], strlen(smuggle[i]), &b);
        bool leading_zeros = i == 2; /* a valid 29: the request has a body, then closes */
        bool ok = closed && count_answers(&b) == 1 && !strstr(bt_buf_str(&b), "/b\n") &&
                  !strncmp(bt_buf_str(&b), leading_zeros ? "HTTP/1.1 200 " : "HTTP/1.1 400 ", 13);
        OK(ok, "r4 break 15: framing case %zu: one answer (%s), then closed; the body is never "
               "answered as a request (%d answers: '%.12s')",
           i, leading_zeros ? "200" : "400", count_answers(&b), bt_buf_str(&b));
    }
    /* a request with a well-formed zero length keeps its connection for the next */
    bt_buf_reset(&b);
    static const char zero[] = "GET /a HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n"
                               "GET /b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    closed = exchange(s, zero, sizeof zero - 1, &b);
    OK(closed && count_answers(&b) == 2 && strstr(bt_buf_str(&b), "/b\n"),
       "Content-Length: 0: both pipelined requests answered");
    bt_buf_free(&b);
    bt_httpd_free(s);
}

static void test_parse(void)
{
    struct bt_httpd_req rq;
    OK(bt_httpd_parse("GET / HTTP/1.1\r\nContent-Length: 5\r\n", &rq) == 0 && !rq.keep_alive,
       "a body: answered, then the connection closes");
    OK(bt_httpd_parse("GET / HTTP/1.1\r\nContent-Length: 0\r\nContent-Length: 0\r\n", &rq) == 0 &&
           rq.keep_alive, "two equal Content-Length: 0: no body, kept alive");
    static const char *const bad[] = {
        "GET / HTTP/1.1\r\nContent-Length: 5x\r\n",
        "GET / HTTP/1.1\r\nContent-Length: -1\r\n",
        "GET / HTTP/1.1\r\nContent-Length: +5\r\n",
        "GET / HTTP/1.1\r\nContent-Length: 5, 5\r\n",
        "GET / HTTP/1.1\r\nContent-Length: 0\r\nContent-Length: 5\r\n",
        "GET / HTTP/1.1\r\nContent-Length :0\r\n",
        "GET / HTTP/1.1\r\nHost x\r\n",
        "GET / HTTP/1.1\r\n: x\r\n",
        "GET / HTTP/1.1\r\nHost: x\r\n folded\r\n",
        "POST / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n",
    };
    for (size_t i = 0; i < BT_ARRAY_LEN(bad); i++)
        OK(bt_httpd_parse(bad[i], &rq) == 400, "malformed framing or header line %zu: 400", i);
}

int main(void)
{
    struct bt_buf b = {0};
    for (int i = 0; i < BIG; i++)
        bt_buf_add(&b, i % 64 == 63 ? "\n" : "x", 1);
    big = bt_httpd_body_take(&b);
    test_pipelining_non_readers();
    test_framing();
    test_parse();
    bt_httpd_body_unref(big);
    return tap_done();
}
