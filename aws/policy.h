/* The AWS rules for the HTTP client (net/http.h): SigV4 on every attempt with the clock
 * corrected per host, the error code of an answer, the SDKs' standard-mode retry classes
 * (throttling, transient), and credentials refreshed when missing, near expiry, or refused
 * as expired. Requests to AWS set .policy = &bt_aws_policy. */
#ifndef BEDTOP_POLICY_H
#define BEDTOP_POLICY_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "aws/sigv4.h"
#include "net/http.h"

#define BT_AWS_SKEW_HOSTS 8

/* Credentials shared by requests of one profile; refreshed when missing, within 5 minutes of
 * expiry, or after ExpiredToken/ExpiredTokenException (then the request is retried once).
 * A refresh never blocks the loop: refresh() either finishes at once (0: creds set, -1: err) or
 * starts work inside this bt_http (1: STS/SSO requests, a credential_process child) and later calls
 * bt_creds_provider_done() from one of this bt_http's callbacks. Requests that need credentials wait
 * (without a timer) until it is done; requests whose old credentials are still valid use them. */
struct bt_creds_provider {
    struct bt_creds creds;
    bool valid;
    int (*refresh)(struct bt_creds_provider *p, struct bt_http *h, char *err, size_t errlen);
    void *arg;                    /* for refresh (e.g. profile options) */
    char error[1024];             /* last refresh failure, shown to the user (whole) */
    bool pending;                 /* a refresh is running */
    unsigned gen;                 /* refreshes finished so far */
    int64_t next_try;             /* epoch s: no early (advisory) refresh before this after a failure */
    struct { char host[256]; int64_t offset; } skew[BT_AWS_SKEW_HOSTS]; /* server - local clock, s */
    int nskew, skew_next;
};
/* Ends a pending refresh: c != NULL replaces the creds, else err (one line) is kept. */
void bt_creds_provider_done(struct bt_creds_provider *p, const struct bt_creds *c, const char *err);

extern const struct bt_http_policy bt_aws_policy;

/* Pure: the AWS error code and message of an error answer. The x-amzn-query-error header
 * (NULL if absent) wins over the body's __type/code/Code (JSON) or <Code> (XML), because
 * awsQueryCompatible services (CloudWatch) put the documented code there. Codes are
 * normalised: "ns#Code:http://..." -> "Code". Returns 0 when a code was found, else -1
 * (code ""); msg gets "message"/"Message" (control characters replaced) or "". */
int bt_aws_error_code(const char *body, size_t len, const char *query_error_header,
                      char *code, size_t codelen, char *msg, size_t msglen);
/* Standard-mode classification of an error code (true for the throttling list). */
bool bt_aws_is_throttle_code(const char *code);
#endif
