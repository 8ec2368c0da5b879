/* Streaming responses and fed request bodies, the other thread's side: a consumer takes body
 * bytes as they arrive, a feeder hands request body bytes over, each waiting (or arming its
 * event loop's completion queue) when there is nothing to take or no room. The loop thread's
 * side of both is in transfer.c (on_body, on_read). See "Streaming" in transfer.h. */
#include "transfer_impl.h"

#include "clock.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------------
 * Streaming, consumer side (see transfer.h).
 */

static int stream_ready_locked(rx_transfer *t, int want_body)
{
    if (rx_transfer_is_delivered(t))
        return 1;
    return want_body ? t->body_buf.len > 0 : t->response.headers_done;
}

int rx_stream_ready(rx_transfer *t, int want_body, int arm)
{
    rx_mutex_lock(&t->stream_lock);
    int ready = stream_ready_locked(t, want_body);
    if (!ready && arm)
        t->consumer_waiting = 1;
    rx_mutex_unlock(&t->stream_lock);
    return ready;
}


int rx_stream_wait(rx_transfer *t, int want_body, long timeout_ms)
{
    int64_t deadline_us = rx_clock_deadline_us(timeout_ms);
    int timed_out = 0;
    rx_mutex_lock(&t->stream_lock);
    while (!stream_ready_locked(t, want_body) && !timed_out)
        timed_out = rx_cond_wait_until(&t->stream_cond, &t->stream_lock, deadline_us);
    int ready = stream_ready_locked(t, want_body);
    rx_mutex_unlock(&t->stream_lock);
    return ready ? 0 : ETIMEDOUT;
}

char *rx_stream_take(rx_transfer *t, size_t *len, int *resume)
{
    rx_mutex_lock(&t->stream_lock);
    char *data = t->body_buf.len ? rx_buffer_steal(&t->body_buf, len) : NULL;
    if (data == NULL)
        *len = 0;
    *resume = t->paused;
    t->paused = 0;
    rx_mutex_unlock(&t->stream_lock);
    return data;
}

/* ---------------------------------------------------------------------------------------------
 * Fed request bodies, feeder side (see transfer.h).
 */

static int upload_room_locked(rx_transfer *t)
{
    return rx_transfer_is_delivered(t) || t->upload_buf.len - t->upload_off < RX_UPLOAD_HIGH_WATER;
}

/* The transfer must be resumed if the read callback paused it for want of bytes. */
static int take_upload_pause_locked(rx_transfer *t)
{
    int paused = t->upload_paused;
    t->upload_paused = 0;
    return paused;
}

long rx_upload_feed(rx_transfer *t, const char *data, size_t len, int arm, int *resume)
{
    *resume = 0;
    rx_mutex_lock(&t->stream_lock);
    if (rx_transfer_is_delivered(t)) {
        rx_mutex_unlock(&t->stream_lock);
        return RX_FEED_OVER;
    }
    if (!upload_room_locked(t)) {
        if (arm)
            t->consumer_waiting = 1;
        rx_mutex_unlock(&t->stream_lock);
        return 0;
    }
    /* Take no more than the room left: a large chunk goes in in pieces, the buffer stays
     * bounded and no single copy holds the lock for long. */
    size_t room = RX_UPLOAD_HIGH_WATER - (t->upload_buf.len - t->upload_off);
    if (len > room)
        len = room;
    if (t->upload_off > 0) {
        /* Slide the unsent tail to the front so the buffer does not creep forward. */
        size_t left = t->upload_buf.len - t->upload_off;
        memmove(t->upload_buf.data, t->upload_buf.data + t->upload_off, left);
        t->upload_buf.len = left;
        t->upload_off = 0;
    }
    long rc = rx_buffer_append(&t->upload_buf, data, len) == 0 ? (long)len : RX_FEED_NOMEM;
    *resume = take_upload_pause_locked(t);
    rx_mutex_unlock(&t->stream_lock);
    return rc;
}

int rx_upload_wait(rx_transfer *t, long timeout_ms)
{
    int64_t deadline_us = rx_clock_deadline_us(timeout_ms);
    int timed_out = 0;
    rx_mutex_lock(&t->stream_lock);
    while (!upload_room_locked(t) && !timed_out)
        timed_out = rx_cond_wait_until(&t->stream_cond, &t->stream_lock, deadline_us);
    int ready = upload_room_locked(t);
    rx_mutex_unlock(&t->stream_lock);
    return ready ? 0 : ETIMEDOUT;
}

void rx_upload_end(rx_transfer *t, int *resume)
{
    rx_mutex_lock(&t->stream_lock);
    t->upload_eof = 1;
    *resume = take_upload_pause_locked(t);
    rx_mutex_unlock(&t->stream_lock);
}
