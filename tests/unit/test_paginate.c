/* The one pagination loop (collectors/paginate.c): every AWS list call of the
 * collectors pages through it, so its guard is tested once here; each collector's
 * suite (test_cloudwatch, test_quotas, test_insights, test_catalogue,
 * test_aws_collectors) runs it against the fake AWS. Here the requests go nowhere:
 * each answer is handed to the loop's callback as the HTTP client would. */
#include <stdlib.h>
#include <string.h>

#include "collectors/paginate.h"
#include "core/util.h"
#include "tests/tap.h"

/* One listing's world: the tokens it sent, the pages it read, how it ended. */
struct world {
    char sent[16][32];       /* token of each request ("" the first page) */
    int nsent;
    bt_http_cb done;
    void *done_arg;
    int pages_read, ends;
    enum bt_pages_end how;
    char err[160];
    int restart;             /* end() starts this many listings more */
    struct bt_pages p;
};

static void w_submit(void *arg, const char *token, bt_http_cb done, void *done_arg)
{
    struct world *w = arg;
    if (w->nsent < 16)
        bt_strlcpy(w->sent[w->nsent], token ? token : "", sizeof w->sent[0]);
    w->nsent++;
    w->done = done;
    w->done_arg = done_arg;
}

/* A page's body is its next token; "" the last page, "BAD" unreadable. */
static bool w_page(void *arg, const struct bt_http_resp *resp, char **next, char *err, size_t n)
{
    struct world *w = arg;
    w->pages_read++;
    if (!strcmp(resp->body, "BAD")) {
        bt_strlcpy(err, "unexpected answer", n);
        return false;
    }
    *next = resp->body[0] ? bt_xstrdup(resp->body) : NULL;
    return true;
}

static const struct bt_pages_ops w_ops;

static void w_end(void *arg, enum bt_pages_end how, const struct bt_http_resp *resp,
                  const char *err)
{
    struct world *w = arg;
    (void)resp;
    w->ends++;
    w->how = how;
    bt_strlcpy(w->err, err, sizeof w->err);
    if (w->restart-- > 0)
        bt_pages_start(&w->p, &w_ops, w, 3);
}

static const struct bt_pages_ops w_ops = {w_submit, w_page, w_end};

static void answer(struct world *w, long status, const char *body)
{
    struct bt_http_resp r = {.status = status, .body = body, .body_len = strlen(body)};
    w->done(w->done_arg, &r);
}

int main(void)
{
    {
        /* three pages: the tokens go back as they came, the end is said once */
        struct world w = {0};
        bt_pages_start(&w.p, &w_ops, &w, 10);
        answer(&w, 200, "t1");
        answer(&w, 200, "t2");
        answer(&w, 200, "");
        OK(w.nsent == 3 && !strcmp(w.sent[0], "") && !strcmp(w.sent[1], "t1") &&
               !strcmp(w.sent[2], "t2"),
           "each page asks with the token of the one before (first without)");
        OK(w.ends == 1 && w.how == BT_PAGES_DONE && w.pages_read == 3, "three pages, one end: done");
        OK(w.p.token == NULL && w.p.pages == 0, "nothing held after the end");
    }
    {
        /* the same token twice: the same page again, the listing does not end */
        struct world w = {0};
        bt_pages_start(&w.p, &w_ops, &w, 10);
        answer(&w, 200, "t1");
        answer(&w, 200, "t1");
        OK(w.ends == 1 && w.how == BT_PAGES_RUNAWAY && w.nsent == 2,
           "a token that repeats ends the listing as one that does not end, not asked a 3rd time");
    }
    {
        /* max_pages 3: pages 1 and 2 carry a token and are followed; the third's token is
         * not (three pages answered, the fourth would pass the bound) */
        struct world w = {0};
        bt_pages_start(&w.p, &w_ops, &w, 3);
        answer(&w, 200, "a");
        answer(&w, 200, "b");
        answer(&w, 200, "c");
        OK(w.ends == 1 && w.how == BT_PAGES_RUNAWAY && w.nsent == 3,
           "at most max_pages requests (3 sent), then: pagination does not end");
        OK(w.p.token == NULL, "its token is dropped");
    }
    {
        struct world w = {0};
        bt_pages_start(&w.p, &w_ops, &w, 10);
        answer(&w, 200, "a");
        answer(&w, 403, "{}");
        OK(w.ends == 1 && w.how == BT_PAGES_HTTP && w.pages_read == 1,
           "an error answer ends it without being read as a page");
    }
    {
        struct world w = {0};
        bt_pages_start(&w.p, &w_ops, &w, 10);
        answer(&w, 200, "BAD");
        OK(w.ends == 1 && w.how == BT_PAGES_PARSE && !strcmp(w.err, "unexpected answer"),
           "an unreadable page ends it with the parser's reason");
    }
    {
        /* end() starting the next listing (the next step of a collector) on the same pager */
        struct world w = {.restart = 1};
        bt_pages_start(&w.p, &w_ops, &w, 3);
        answer(&w, 200, "x");
        answer(&w, 200, "");
        OK(w.ends == 1 && w.nsent == 3 && !strcmp(w.sent[2], ""),
           "a listing started from end() begins at its first page");
        answer(&w, 200, "x");
        answer(&w, 200, "x");
        OK(w.ends == 2 && w.how == BT_PAGES_RUNAWAY && w.p.pages == 0,
           "and pages anew: its own counter and its own repeat check");
        bt_pages_free(&w.p);
    }
    return tap_done();
}
