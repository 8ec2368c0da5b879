/* The command queue: any thread queues a transfer's submit, cancel or resume under the engine's
 * mutex; the driver (the loop thread, or a blocking caller in drive.c) takes them all at once.
 * See engine.h for the threading contract. */
#include "engine_impl.h"

/* ---------------------------------------------------------------------------------------------
 * Command queue (any thread).
 */

/* Wake the loop thread: it clears `wake` before it takes the queue (rx_run_commands). */
void rx_wake_loop_thread(rx_engine *e) { rx_notifier_raise(&e->wake); }

/* A deferred submit wakes the loop thread anyway once this many are owed, so that it starts on
 * a long burst while the event loop is still submitting rather than idling until the flush
 * (64 tasks on uvloop: 47k requests/s when only the flush woke it, 56k with this; 16 and 48 did
 * worse than 24; docs/performance.md). */
enum { DEFER_BATCH = 24 };

/* Queue one of the transfer's command nodes. Returns 0, or -1 if the engine is closing (the
 * command was not queued). With `defer`, the wake-up is owed until rx_engine_flush() or
 * the next command queued without `defer`. */
static int push_command(rx_engine *e, rx_transfer *t, rx_command *cmd, int kind, int defer)
{
    cmd->transfer = t;
    cmd->kind = kind;
    cmd->next = NULL;
    rx_mutex_lock(&e->lock);
    if (e->closing) {
        rx_mutex_unlock(&e->lock);
        return -1;
    }
    if (kind == RX_CMD_SUBMIT)
        rx_transfer_submit(t); /* before the driver can take it: it reads the queue under `lock` */
    int was_empty = e->queue_head == NULL;
    if (was_empty)
        __atomic_store_n(&e->queue_head, cmd, __ATOMIC_RELAXED); /* rx_commands_waiting() */
    else
        e->queue_tail->next = cmd;
    e->queue_tail = cmd;
    if (e->driver == NOBODY) {
        /* The loop thread is parked, not watching `wake`: give it the loop back. */
        e->driver = LOOP_THREAD;
        rx_cond_signal(&e->unparked);
    }
    /* Only the first command of a batch pays for a wake-up. The loop thread clears `wake`
     * *before* taking the queue, so a command pushed after that read sees an empty queue and
     * writes again: nothing is left behind. A deferred command leaves the write owed, and the
     * next command that is not deferred pays it even though the queue was not empty. */
    int wake = 0;
    if (defer) {
        if (was_empty || e->wake_owed > 0)
            e->wake_owed++;
        if (e->wake_owed >= DEFER_BATCH) {
            wake = 1;
            e->wake_owed = 0;
        }
    } else {
        wake = was_empty || e->wake_owed;
        e->wake_owed = 0;
    }
    /* Raised under the lock: rx_engine_close() sets `closing` under it before it closes the
     * notifier, so the descriptor is still ours (not a number reused by another open). */
    if (wake)
        rx_wake_loop_thread(e);
    rx_mutex_unlock(&e->lock);
    return 0;
}

void rx_engine_flush(rx_engine *e)
{
    rx_mutex_lock(&e->lock);
    if (e->wake_owed > 0 && !e->closing) /* closing: shutdown takes the queue anyway */
        rx_wake_loop_thread(e);
    e->wake_owed = 0;
    rx_mutex_unlock(&e->lock);
}

static int submit(rx_engine *e, rx_transfer *t, int defer)
{
    rx_transfer_ref(t); /* the engine's reference, dropped at completion */
    if (push_command(e, t, &t->commands.submit, RX_CMD_SUBMIT, defer) != 0) {
        rx_transfer_unref(t);
        return RX_E_ENGINE_CLOSED;
    }
    return 0;
}

int rx_engine_submit(rx_engine *e, rx_transfer *t) { return submit(e, t, 0); }

int rx_engine_submit_deferred(rx_engine *e, rx_transfer *t) { return submit(e, t, 1); }

void rx_engine_cancel(rx_engine *e, rx_transfer *t)
{
    if (rx_transfer_is_delivered(t))
        return;
    /* One cancel command per transfer: the command node is embedded in it. */
    if (__atomic_exchange_n(&t->commands.cancel_sent, 1, __ATOMIC_ACQ_REL))
        return;
    rx_transfer_ref(t); /* kept until the loop has processed the command */
    if (push_command(e, t, &t->commands.cancel, RX_CMD_CANCEL, 0) != 0)
        rx_transfer_unref(t); /* closing: shutdown completes the transfer anyway */
}

void rx_engine_resume(rx_engine *e, rx_transfer *t)
{
    /* The command node is embedded in the transfer, so at most one may be queued; the body
     * stream and the fed request body may both ask for one. */
    if (__atomic_exchange_n(&t->commands.resume_queued, 1, __ATOMIC_ACQ_REL))
        return; /* one is queued already; it resumes both directions */
    rx_transfer_ref(t);
    if (push_command(e, t, &t->commands.resume, RX_CMD_RESUME, 0) != 0)
        rx_transfer_unref(t);
}

/* Every queued command, oldest first: the queue is empty afterwards. */
rx_command *rx_take_commands(rx_engine *e)
{
    rx_mutex_lock(&e->lock);
    rx_command *cmd = e->queue_head;
    __atomic_store_n(&e->queue_head, NULL, __ATOMIC_RELAXED); /* rx_commands_waiting() */
    e->queue_tail = NULL;
    e->wake_owed = 0; /* the loop has them: a flush need not wake it */
    rx_mutex_unlock(&e->lock);
    return cmd;
}

void rx_run_commands(rx_engine *e)
{
    /* Clear the wake-up first, then take the queue: see push_command(). */
    rx_notifier_clear(&e->wake);
    rx_command *cmd = rx_take_commands(e);
    while (cmd != NULL) {
        rx_command *next = cmd->next; /* read first: completing may free the transfer */
        if (cmd->kind == RX_CMD_SUBMIT)
            rx_start_transfer(e, cmd->transfer);
        else if (cmd->kind == RX_CMD_CANCEL)
            rx_cancel_transfer(e, cmd->transfer);
        else
            rx_resume_transfer(cmd->transfer);
        cmd = next;
    }
}

/* Commands queued (a hint, read without the lock: rx_run_commands takes them under it). The
 * queue's head is written with atomic stores, under the lock, so this read races with none. */
int rx_commands_waiting(rx_engine *e)
{
    return __atomic_load_n(&e->queue_head, __ATOMIC_RELAXED) != NULL;
}
