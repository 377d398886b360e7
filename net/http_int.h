/* Inside the HTTP client: net/http.c runs transfers through their attempts, net/http_msg.c
 * builds what one attempt sends and reads what comes back. Nothing outside net/ includes it. */
#ifndef BEDTOP_HTTP_INT_H
#define BEDTOP_HTTP_INT_H
#include <curl/curl.h>

#include "core/util.h"
#include "net/http.h"

#define DEFAULT_TIMEOUT 10.0
#define DEFAULT_ATTEMPTS 3
#define RETRY_COST 5
#define TIMEOUT_RETRY_COST 10
#define NO_RETRY_INCREMENT 1
#define MAX_POOL 8
#define MAX_HOST_CONNECTIONS 4
#define MAX_ORIGINS 64               /* origins whose connections are counted (more: curl queues) */

enum xfer_state { X_WAIT, X_RUN };

struct xfer {
    struct xfer *next;
    struct bt_http *h;
    enum xfer_state state;
    unsigned long seq;
    char *method, *url, *url_log, *service, *region, *target, *content_type, *label;
    char *host_hdr, *path, *query;
    char *body;              /* NULL until the first attempt where body_fn writes it */
    size_t body_len;
    void (*body_fn)(void *body_arg, struct bt_buf *out);
    void *body_arg;
    struct bt_header *headers;
    size_t nheaders;
    const struct bt_http_policy *policy;
    struct bt_creds_provider *creds;
    long timeout_ms;
    int max_attempts;
    bt_http_cb cb;
    void *arg;
    char invocation_id[37];
    char fail[1024];             /* set before sending: deliver this failure (whole) */
    enum bt_errkind fail_kind;   /* what kind of failure fail is (request unless said) */
    /* per attempt */
    int64_t due_ms;
    CURL *easy;
    struct curl_slist *slist;
    struct bt_buf in;
    bool too_big;
    char ctype[128];
    char query_error[160];
    char error_type[160];
    int64_t server_date;
    char errbuf[CURL_ERROR_SIZE];
    int64_t attempt_t0;
    /* across attempts */
    int attempts;
    int last_cost;
    unsigned fixes;              /* the policy's note of corrections tried */
    int64_t t0_ms;
    bool cred_wait;              /* waiting for its credentials' refresh */
    unsigned cred_gen;           /* the policy's note of which refresh */
    int origin;                  /* index into bt_http.origin (-1: not counted) */
    bool slot_wait;              /* due, but its origin's MAX_HOST_CONNECTIONS are busy */
    bool slot_held;              /* counted in running[origin] */
};

#define MAX_WATCH 32
struct watch {
    int fd;
    int64_t deadline_ms;
    bt_http_watch_cb cb;
    void *arg;
};

struct bt_http {
    CURLM *multi;
    int verbose;
    struct bt_http_stats stats;
    struct xfer *list;
    unsigned long seq;
    CURL *pool[MAX_POOL];
    int npool;
    double backoff_base, backoff_max;
    size_t max_body;
    uint64_t rng;
    struct watch watches[MAX_WATCH];
    int nwatch;
    /* Transfers in the multi per origin (scheme://host:port). A request starts (and
     * its timeout begins) only when its origin has a free connection, so time spent
     * queued behind the cap never counts against the request's timeout. */
    char *origin[MAX_ORIGINS];
    int running[MAX_ORIGINS];
    int norigin;
};

char *bt_http_i_dup(const char *s);                       /* NULL stays NULL */
/* Header names and values go into raw HTTP lines: no CR/LF, names without ':'. */
bool bt_http_i_header_safe(const char *s, bool is_name);
bool bt_http_i_method_ok(const char *m);
/* Splits x->url into the Host header, raw path and query and the URL for logs; false + x->fail. */
bool bt_http_i_parse_url(struct xfer *x);
/* curl's write and header callbacks (userp: the transfer). */
size_t bt_http_i_on_body(char *data, size_t size, size_t nmemb, void *userp);
size_t bt_http_i_on_header(char *line, size_t size, size_t nmemb, void *userp);
/* The attempt's header list, signed by the request's policy; false with x->fail set. */
bool bt_http_i_build_headers(struct xfer *x);
/* The list held the session token: clear it before it returns to malloc. */
void bt_http_i_wipe_slist(struct curl_slist *l);
#endif
