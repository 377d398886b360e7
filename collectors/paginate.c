/* The pagination loop (collectors/paginate.h): page, token, counter, guard. */
#include "collectors/paginate.h"

#include <stdlib.h>
#include <string.h>

void bt_pages_free(struct bt_pages *p)
{
    free(p->token);
    p->token = NULL;
    p->pages = 0;
}

void bt_pages_start(struct bt_pages *p, const struct bt_pages_ops *ops, void *arg,
                    int max_pages)
{
    bt_pages_free(p);
    p->ops = ops;
    p->arg = arg;
    p->max_pages = max_pages;
    p->ops->submit(p->arg, NULL, bt_pages_answer, p);
}

/* Ends the listing: the token is dropped first, so end() may start the next one. */
static void finish(struct bt_pages *p, enum bt_pages_end how, const struct bt_http_resp *resp,
                   const char *err)
{
    bt_pages_free(p);
    p->ops->end(p->arg, how, resp, err);
}

void bt_pages_answer(void *arg, const struct bt_http_resp *resp)
{
    struct bt_pages *p = arg;
    if (resp->status != 200) {
        finish(p, BT_PAGES_HTTP, resp, "");
        return;
    }
    char *token = NULL;
    char err[160] = "";
    if (!p->ops->page(p->arg, resp, &token, err, sizeof err)) {
        free(token);
        finish(p, BT_PAGES_PARSE, resp, err);
        return;
    }
    if (!token) {
        finish(p, BT_PAGES_DONE, resp, "");
        return;
    }
    /* pages may be short or empty and still carry a token: keep going, unless the
     * token comes back as it went (the same page again) or the pages run past the bound */
    if (++p->pages >= p->max_pages || (p->token && strcmp(p->token, token) == 0)) {
        free(token);
        finish(p, BT_PAGES_RUNAWAY, resp, "");
        return;
    }
    free(p->token);
    p->token = token;
    p->ops->submit(p->arg, p->token, bt_pages_answer, p);
}
