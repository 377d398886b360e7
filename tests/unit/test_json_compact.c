/* bt_buf_json_compact (core/json.h): cJSON_PrintUnformatted's text byte for byte,
 * without its number round trip; bt_buf_json_pretty and bt_buf_json_member:
 * cJSON_Print's, whole or a piece at a time (check's streamed report). The reference
 * is cJSON itself, on the same tree. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/format.h"
#include "core/json.h"
#include "core/sanitize.h"
#include "tests/tap.h"

static bool same(const cJSON *j, const char *what)
{
    char *want = cJSON_PrintUnformatted(j);
    struct bt_buf b = {0};
    bt_buf_json_compact(&b, j);
    bool ok = !strcmp(bt_buf_str(&b), want);
    if (!ok)
        printf("# %s: got %s\n# cJSON:  %s\n", what, bt_buf_str(&b), want);
    cJSON_free(want);
    bt_buf_free(&b);
    return ok;
}

static void count_piece(void *ctx, struct bt_buf *b)
{
    (void)b;
    ++*(int *)ctx;
}

/* takes what is printed so far, as a writer sends it on */
static int taken;
static void take_piece(void *ctx, struct bt_buf *b)
{
    bt_buf_add(ctx, b->buf, b->len);
    bt_buf_reset(b);
    taken++;
}

static bool same_pretty(const cJSON *j)
{
    char *want = cJSON_Print(j);
    struct bt_buf b = {0};
    bt_buf_json_pretty(&b, j, 0);
    bool ok = !strcmp(bt_buf_str(&b), want);
    if (!ok)
        printf("# got:\n%s\n# cJSON:\n%s\n", bt_buf_str(&b), want);
    cJSON_free(want);
    bt_buf_free(&b);
    return ok;
}

/* The next of 50,000 numbers of every size, rounded to 0-6 decimals (the fast
 * path) or not (xorshift from *x) */
static double next_number(uint64_t *x)
{
    *x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
    double v = (double)(int64_t)(*x >> 11) / (double)(1ull << (*x % 60));
    if (*x & 2)
        v = -v;
    if (*x & 1)
        v = bt_round_to(v, (int)(*x % 7));
    return v;
}

/* One object through a writer: every kind of member, nesting, a NULL string (no
 * member, as cJSON_AddStringToObject), numbers; then 20 levels (deeper than the
 * writer holds: the levels past it dropped, never a crash) */
static void jw_sample(struct bt_jw *w, const double *nums, size_t n)
{
    bt_jw_null(w, "n");
    bt_jw_bool(w, "t", true);
    bt_jw_bool(w, "f", false);
    bt_jw_str(w, "s", "a\"b\\c\b\f\n\r\t\v\x01\x1f \x7f caf\xc3\xa9");
    bt_jw_str(w, "k\"ey\n", "");
    bt_jw_str(w, "none", NULL);
    /* past the short copy: plain, then an escape and a bad byte after 64 plain bytes */
    bt_jw_str(w, "long", "0123456789012345678901234567890123456789012345678901234567890123456789");
    bt_jw_str(w, "long\"", "0123456789012345678901234567890123456789012345678901234567890123\n\xc3");
    bt_jw_str(w, "bad\xc3", "c1 \xc2\x85 cut \xe2\x82 end \xff");
    bt_jw_str_or_null(w, "empty", "");
    bt_jw_round(w, "r", 38.456, 1);
    bt_jw_time(w, "t0", 0);
    bt_jw_time(w, "t1", 1764583200);
    bt_jw_obj(w, "empty_o");
    bt_jw_end(w);
    bt_jw_arr(w, "empty_a");
    bt_jw_end(w);
    bt_jw_arr(w, "a");
    for (size_t i = 0; i < n; i++)
        bt_jw_num(w, NULL, nums[i]);
    bt_jw_obj(w, NULL);
    bt_jw_num(w, "x", 1);
    bt_jw_arr(w, "in");
    bt_jw_str(w, NULL, "y");
    bt_jw_str(w, NULL, "z");
    bt_jw_end(w);
    bt_jw_end(w);
    bt_jw_end(w);
    for (int d = 0; d < 20; d++)
        bt_jw_obj(w, "deep");
    bt_jw_num(w, "bottom", 1);
    for (int d = 0; d < 20; d++)
        bt_jw_end(w);
    bt_jw_str(w, "last", "after the deep");
}

int main(void)
{
    /* every kind of node, strings with each escape (and \v, which cJSON writes as
     * \u000b), UTF-8 and DEL as they are, keys escaped as strings are */
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNullToObject(o, "n");
    cJSON_AddTrueToObject(o, "t");
    cJSON_AddFalseToObject(o, "f");
    cJSON_AddStringToObject(o, "s", "a\"b\\c\b\f\n\r\t\v\x01\x1f \x7f caf\xc3\xa9");
    cJSON_AddStringToObject(o, "k\"ey\n", "");
    cJSON_AddRawToObject(o, "raw", "[1,2]");
    cJSON_AddItemToObject(o, "empty_o", cJSON_CreateObject());
    cJSON_AddItemToObject(o, "empty_a", cJSON_CreateArray());
    cJSON *a = cJSON_AddArrayToObject(o, "a");
    /* numbers: whole (int range and beyond), rounded decimals, thirds, tiny, huge,
     * negative zero, NaN and infinity (null) */
    static const double nums[] = {0, -0.0, 1, -1, 2147483647.0, 2147483648.0, -2147483649.0,
                                  1e15, 1e16, 123456789012.5, 38.4, 0.1, 0.0001, 0.00001,
                                  -12.345, 99.999999, 1.0 / 3, 2.0 / 3, 1e-300, 1e300,
                                  NAN, INFINITY, -INFINITY, 9007199254740993.0, 0.125,
                                  3.14159265358979, 1234567.891};
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber(nums[i]));
    OK(same(o, "every kind"), "every kind of node prints as cJSON prints it");
    OK(same_pretty(o), "the same tree, pretty, prints as cJSON_Print prints it");
    /* a piece of a tree: o as the second item of an array that is a member of an
     * object that is an item of the root array, printed from its depth (3), and
     * that object's members one by one at theirs: the whole tree's text around them */
    cJSON *root = cJSON_CreateArray(), *mid = cJSON_CreateObject();
    cJSON_AddItemToArray(root, mid);
    cJSON_AddNumberToObject(mid, "before", 38.4);
    cJSON *arr = cJSON_AddArrayToObject(mid, "items");
    cJSON_AddItemToArray(arr, cJSON_CreateString("first"));
    cJSON_AddItemToArray(arr, cJSON_Duplicate(o, true));
    cJSON_AddItemToObject(mid, "after", cJSON_CreateObject());
    struct bt_buf b = {0};
    /* the last member handed over item by item: what is handed is the text so far */
    int pieces = 0;
    struct bt_json_piece piece = {count_piece, &pieces};
    bt_buf_puts(&b, "[{\n");
    bt_buf_json_member(&b, mid->child, 2, NULL);
    bt_buf_puts(&b, ",\n\t\t\"items\":\t[\"first\", ");
    bt_buf_json_pretty(&b, o, 3);
    bt_buf_puts(&b, "],\n");
    bt_buf_json_member(&b, mid->child->next->next, 2, &piece);
    bt_buf_puts(&b, "\n\t}]");
    char *want = cJSON_Print(root);
    OK(!strcmp(bt_buf_str(&b), want), "a tree printed a piece at a time is cJSON_Print's text");
    OK(pieces == 0, "an empty object is no item (%d handed)", pieces);
    /* "every kind" as a member, handed over after each item: the pieces joined are
     * the text printed whole */
    struct bt_buf whole = {0}, sent = {0}, rest = {0};
    struct bt_json_piece take = {take_piece, &sent};
    bt_buf_json_member(&whole, mid->child->next, 2, NULL);
    bt_buf_json_member(&rest, mid->child->next, 2, &take);
    bt_buf_add(&sent, rest.buf, rest.len);
    OK(taken > 20 && !strcmp(bt_buf_str(&sent), bt_buf_str(&whole)),
       "a member handed over item by item (%d pieces) is the member printed whole", taken);
    bt_buf_free(&whole);
    bt_buf_free(&sent);
    bt_buf_free(&rest);
    if (strcmp(bt_buf_str(&b), want))
        printf("# got:\n%s\n# cJSON:\n%s\n", bt_buf_str(&b), want);
    cJSON_free(want);
    bt_buf_free(&b);
    cJSON_Delete(root);
    cJSON_Delete(o);
    /* 50,000 numbers of every size, rounded to 0-6 decimals (the fast path) or not */
    int bad = 0;
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < 50000; i++) {
        double v = next_number(&x);
        cJSON *n = cJSON_CreateNumber(v);
        bad += !same(n, "number") || !same_pretty(n);
        cJSON_Delete(n);
    }
    OK(!bad, "50,000 numbers print as cJSON prints them (%d differ)", bad);

    /* the writer: its text is the compact print of the tree it builds, byte for byte */
    static const double more[] = {0, -0.0, 1, -1, 2147483647.0, 2147483648.0, -2147483649.0,
                                  1e15, 1e16, 123456789012.5, 38.4, 0.1, 0.0001, 0.00001,
                                  -12.345, 99.999999, 1.0 / 3, 2.0 / 3, 1e-300, 1e300,
                                  NAN, INFINITY, -INFINITY, 9007199254740993.0, 0.125};
    cJSON *t = cJSON_CreateObject();
    struct bt_jw w;
    bt_jw_tree(&w, t);
    jw_sample(&w, more, sizeof more / sizeof more[0]);
    struct bt_buf text = {0};
    bt_jw_text(&w, &text);
    jw_sample(&w, more, sizeof more / sizeof more[0]);
    bt_jw_end(&w);
    char *tree_text = cJSON_PrintUnformatted(t);
    struct bt_buf san = {0};
    bt_san_json_text(&san, tree_text);
    OK(!strcmp(bt_buf_str(&text), bt_buf_str(&san)),
       "the writer's text is its tree's, as cJSON prints it, sanitised");
    if (strcmp(bt_buf_str(&text), bt_buf_str(&san)))
        printf("# text: %s\n# tree: %s\n", bt_buf_str(&text), bt_buf_str(&san));
    bt_buf_free(&san);
    OK(strstr(tree_text, "\"last\":\"after the deep\"") && !strstr(tree_text, "\"none\""),
       "past the deepest level the writer goes on; a NULL string is no member");
    cJSON_free(tree_text);
    cJSON_Delete(t);
    /* the 50,000 numbers through the writer's text */
    bad = 0;
    x = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < 50000; i++) {
        double v = next_number(&x);
        cJSON *n = cJSON_CreateObject();
        cJSON_AddNumberToObject(n, "v", v);
        char *expect = cJSON_PrintUnformatted(n);
        bt_buf_reset(&text);
        bt_jw_text(&w, &text);
        bt_jw_num(&w, "v", v);
        bt_jw_end(&w);
        bad += strcmp(bt_buf_str(&text), expect) != 0;
        cJSON_free(expect);
        cJSON_Delete(n);
    }
    OK(!bad, "50,000 numbers written as text print as cJSON prints them (%d differ)", bad);
    bt_buf_free(&text);
    return tap_done();
}
