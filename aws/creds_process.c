/* credential_process: the profile's command run without a shell, in its own process group,
 * as a child the loop watches (its pipes and a deadline), never blocking the loop. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "aws/creds_int.h"

extern char **environ;

#define MAX_ARGS 256

static int process_timeout_ms = 30000;

void bt_aws_set_process_timeout(int ms)
{
    process_timeout_ms = ms > 0 ? ms : 30000;
}
static void free_argv(char **argv)
{
    for (size_t i = 0; argv && argv[i]; i++)
        free(argv[i]);
    free(argv);
}

/* Splits like sh words, without any expansion: '...' literal; "..." where backslash escapes
 * " \ $ ` only; elsewhere backslash escapes the next character. Nothing runs a shell. */
static char **split_command(const char *cmd, char *err, size_t errlen)
{
    char **argv = bt_xcalloc(MAX_ARGS + 1, sizeof *argv);
    size_t argc = 0;
    struct bt_buf word = {0};
    const char *p = cmd;
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
            p++;
        if (!*p)
            break;
        bt_buf_reset(&word);
        bt_buf_reserve(&word, 0);
        word.buf[0] = '\0';
        while (*p && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') {
            if (*p == '\'') {
                const char *e = strchr(p + 1, '\'');
                if (!e) {
                    bt_aws_seterr(err, errlen, "unterminated ' quote");
                    goto fail;
                }
                bt_buf_add(&word, p + 1, (size_t)(e - p - 1));
                p = e + 1;
            } else if (*p == '"') {
                p++;
                while (*p && *p != '"') {
                    if (*p == '\\' && p[1] && strchr("\"\\$`", p[1]))
                        p++;
                    bt_buf_putc(&word, *p++);
                }
                if (*p != '"') {
                    bt_aws_seterr(err, errlen, "unterminated \" quote");
                    goto fail;
                }
                p++;
            } else if (*p == '\\') {
                if (!p[1]) {
                    bt_aws_seterr(err, errlen, "trailing backslash");
                    goto fail;
                }
                bt_buf_putc(&word, p[1]);
                p += 2;
            } else {
                bt_buf_putc(&word, *p++);
            }
        }
        if (argc == MAX_ARGS) {
            bt_aws_seterr(err, errlen, "more than %d arguments", MAX_ARGS);
            goto fail;
        }
        argv[argc++] = bt_xstrdup(word.buf);
    }
    bt_buf_free(&word);
    if (argc == 0) {
        bt_aws_seterr(err, errlen, "empty command");
        free_argv(argv);
        return NULL;
    }
    return argv;
fail:
    bt_buf_free(&word);
    free_argv(argv);
    return NULL;
}


static void set_cloexec(int fd)
{
    fcntl(fd, F_SETFD, FD_CLOEXEC);
}

static void process_close_pipes(struct bt_aws_job *j)
{
    for (int k = 0; k < 2; k++) {
        if (j->fd[k] >= 0) {
            bt_http_unwatch(j->h, j->fd[k], j);
            close(j->fd[k]);
            j->fd[k] = -1;
        }
    }
    bt_http_unwatch(j->h, -1, j);
}

/* Kills and reaps a child still running (cancel, or the job ends early). */
static void process_stop(struct bt_aws_job *j)
{
    process_close_pipes(j);
    if (j->pid > 0) {
        kill(-j->pid, SIGKILL);
        while (waitpid(j->pid, &j->status, 0) < 0 && errno == EINTR)
            ;
        j->pid = 0;
    }
}

/* The child is done (j->pid 0, j->status set) or must die (killed here): say how it went. */
static void process_finish(struct bt_aws_job *j, bool timed_out)
{
    process_close_pipes(j);
    if (j->pid > 0) {
        if (timed_out || j->too_big)
            kill(-j->pid, SIGKILL);
        while (waitpid(j->pid, &j->status, 0) < 0 && errno == EINTR)
            ;
        j->pid = 0;
    }
    int status = j->status;
    char errline[256] = "";
    if (j->errb.len) {
        char first[512];
        bt_strlcpy(first, bt_buf_str(&j->errb), sizeof first);
        first[strcspn(first, "\r\n")] = '\0';
        bt_aws_safe_copy(errline, sizeof errline, first, 200);
    }
    char what[PATH_LEN + 300];
    snprintf(what, sizeof what, "credential_process \"%s\" (%s)", j->name, j->pl.where);
    if (j->too_big) {
        bt_aws_job_fail(j, "%s printed more than %d KiB", what, MAX_PROCESS_OUT / 1024);
        return;
    }
    if (timed_out) {
        bt_aws_job_fail(j, "%s timed out after %d ms and was killed", what, process_timeout_ms);
        return;
    }
    if (WIFSIGNALED(status)) {
        bt_aws_job_fail(j, "%s killed by signal %d", what, WTERMSIG(status));
        return;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
        bt_aws_job_fail(j, "%s exited with status %d%s%s", what, WEXITSTATUS(status), errline[0] ? ": " : "", errline);
        return;
    }
    struct bt_creds c = {0};
    char err[PATH_LEN + 400];
    bt_aws_creds_source(&c, "credential_process (%s)", j->pl.where);
    if (bt_aws_creds_from_json(j->out.buf ? j->out.buf : "", j->out.len, true, &c, what, err, sizeof err) != 0) {
        bt_creds_clear(&c);
        bt_aws_job_fail(j, "%s", err);
        return;
    }
    bt_aws_job_got(j, &c);
    bt_creds_clear(&c);
}

/* Pipe readable, the deadline, or (after both pipes closed) the wait for the exit status. */
static void process_event(void *arg, int fd, bool timed_out)
{
    struct bt_aws_job *j = arg;
    if (bt_http_mono_ms() >= j->deadline) {
        process_finish(j, true);
        return;
    }
    if (fd < 0) {
        pid_t w = waitpid(j->pid, &j->status, WNOHANG);
        if (w == j->pid || (w < 0 && errno != EINTR)) {
            j->pid = 0;
            process_finish(j, false);
        } else {
            bt_http_unwatch(j->h, -1, j);
            bt_http_watch(j->h, -1, bt_http_mono_ms() + 10, process_event, j);
        }
        return;
    }
    (void)timed_out;
    int i = fd == j->fd[0] ? 0 : fd == j->fd[1] ? 1 : -1;
    if (i < 0)
        return;
    char chunk[4096];
    ssize_t r = read(fd, chunk, sizeof chunk);
    if (r < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (r <= 0) {
        bt_http_unwatch(j->h, fd, j);
        close(fd);
        j->fd[i] = -1;
    } else if (i == 0 && j->out.len + (size_t)r > MAX_PROCESS_OUT) {
        j->too_big = true;
    } else if (i == 0) {
        bt_buf_add(&j->out, chunk, (size_t)r);
    } else if (j->errb.len < 4096) {
        bt_buf_add(&j->errb, chunk, (size_t)r);
    }
    OPENSSL_cleanse(chunk, sizeof chunk);
    if (j->too_big) {
        process_finish(j, false);
        return;
    }
    if (j->fd[0] < 0 && j->fd[1] < 0) {
        /* both pipes closed: the exit status follows in a moment */
        bt_http_unwatch(j->h, -1, j);
        bt_http_watch(j->h, -1, bt_http_mono_ms(), process_event, j);
    }
}

/* Runs the command without a shell in its own process group (so a timeout kills its children
 * too), stdin from /dev/null; the loop reads its pipes and enforces the deadline. */
static void process_start(struct bt_aws_job *j)
{
    char why[256];
    char **argv = split_command(j->pl.cmd, why, sizeof why);
    if (!argv) {
        bt_aws_job_fail(j, "credential_process (%s): cannot parse the command: %s", j->pl.where, why);
        return;
    }
    bt_aws_safe_copy(j->name, sizeof j->name, argv[0], 80);
    int op[2], ep[2];
    if (pipe(op) != 0) {
        free_argv(argv);
        bt_aws_job_fail(j, "credential_process (%s): pipe: %s", j->pl.where, strerror(errno));
        return;
    }
    if (pipe(ep) != 0) {
        close(op[0]);
        close(op[1]);
        free_argv(argv);
        bt_aws_job_fail(j, "credential_process (%s): pipe: %s", j->pl.where, strerror(errno));
        return;
    }
    for (int i = 0; i < 2; i++) {
        set_cloexec(op[i]);
        set_cloexec(ep[i]);
    }
    fcntl(op[0], F_SETFL, fcntl(op[0], F_GETFL) | O_NONBLOCK);
    fcntl(ep[0], F_SETFL, fcntl(ep[0], F_GETFL) | O_NONBLOCK);
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, op[1], 1);
    posix_spawn_file_actions_adddup2(&fa, ep[1], 2);
    posix_spawnattr_init(&attr);
    sigset_t none, deflt;
    sigemptyset(&none);
    sigemptyset(&deflt);
    sigaddset(&deflt, SIGPIPE);
    sigaddset(&deflt, SIGINT);
    sigaddset(&deflt, SIGTERM);
    sigaddset(&deflt, SIGHUP);
    sigaddset(&deflt, SIGCHLD);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &deflt);
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, &attr, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    free_argv(argv);
    close(op[1]);
    close(ep[1]);
    if (rc != 0) {
        close(op[0]);
        close(ep[0]);
        bt_aws_job_fail(j, "credential_process \"%s\" (%s) cannot run: %s", j->name, j->pl.where, strerror(rc));
        return;
    }
    j->pid = pid;
    j->fd[0] = op[0];
    j->fd[1] = ep[0];
    j->deadline = bt_http_mono_ms() + process_timeout_ms;
    bt_http_watch(j->h, op[0], j->deadline, process_event, j);
    bt_http_watch(j->h, ep[0], j->deadline, process_event, j);
}

const struct bt_aws_provider bt_aws_provider_process = {
    .name = "credential_process", .start = process_start, .release = process_stop,
};
