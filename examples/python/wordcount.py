# The seeds' MapReduce word count (count.py), in their TF 1.x Python, made to finish by
# itself and to count exactly: every task runs this program.
#
#   tw launch --cluster files=1,reduce=1,map=2 -- python3 examples/python/wordcount.py LIST_FILE
#
# As in the seed: the `files` task holds a shared FIFOQueue of file names, the `reduce`
# task the `total` variable, and `map` tasks take names, count their words and add them
# to the total from wherever they run. What the seed left open is closed with the same
# tools, two more queues used as latches and one for reports:
#   - each role's session uses only the tasks it needs, so no task waits for one that has
#     finished;
#   - maps wait until reduce has initialized the total (the seed slept 5 s per file);
#   - maps take names in batches (dequeue_up_to, hence the queue's scalar shape) and add each batch's count with one
#     assign_add(use_locking=True) (the seed's read-add-assign lost updates);
#   - a map leaves (files, words) in `reports` when the queue is closed and empty;
#   - reduce prints the running total every 2 s until every map has reported, checks that
#     the total equals the reports' sum, prints `final total: N` and releases the files
#     task, so every task exits 0 and the job ends by itself (the seed's tasks ran forever).
# Words are counted as `LC_ALL=C wc -w` counts them (examples/word_counter.h).
from __future__ import print_function

import sys

import numpy as np

import tensorweave.compat.v1 as tf

BATCH = 64  # file names per dequeue of a map task

# Bytes that neither start nor end a word in the C locale: control bytes other than the
# separators, and everything outside ASCII's printable range.
NEUTRAL = bytes(b for b in range(256) if not (0x21 <= b <= 0x7e or b in b' \t\n\v\f\r'))
IS_WORD_BYTE = np.array([0x21 <= b <= 0x7e for b in range(256)])


def count_words(data):
    """Words of `data` as `LC_ALL=C wc -w` counts them: with the neutral bytes removed, the
    word bytes that follow a separator (or start the data)."""
    word = IS_WORD_BYTE[np.frombuffer(data.translate(None, NEUTRAL), dtype=np.uint8)]
    if word.size == 0:
        return 0
    return int(word[0]) + int(np.count_nonzero(word[1:] & ~word[:-1]))


list_file = sys.argv[1] if len(sys.argv) > 1 else 'filenames.txt'

config = tf.contrib.learn.RunConfig()
server = tf.train.Server(config.cluster_spec,
                         job_name=config.task_type,
                         task_index=config.task_id)
# The tasks each role's session may use: a session waits for every task it may use, and a
# map that finished early must not keep the others waiting (the seed used one session for
# all, with no filters). reduce waits for all: every map is up before it starts the count.
device_filters = {'files': ['/job:files'],
                  'reduce': [],
                  'map': ['/job:files', '/job:reduce', '/job:map/task:%d' % config.task_id]}
session = tf.Session(server.target,
                     config=tf.ConfigProto(device_filters=device_filters[config.task_type]))
num_maps = config.cluster_spec.num_tasks('map')

with tf.device('/job:files/task:0'):
    filename_queue = tf.FIFOQueue(capacity=10, dtypes=[tf.string], shapes=[[]],
                                  shared_name='filename_queue')
    files_released = tf.FIFOQueue(capacity=1, dtypes=[tf.int32], shared_name='files_released')

with tf.device('/job:reduce/task:0'):
    total_word_count = tf.Variable(0, name='total', dtype=tf.int64)
    counter_ready = tf.FIFOQueue(capacity=1, dtypes=[tf.int32], shared_name='counter_ready')
    reports = tf.FIFOQueue(capacity=num_maps, dtypes=[tf.int64, tf.int64],
                           shapes=[[], []], shared_name='reports')

if config.task_type == 'files':
    filename_to_enqueue = tf.placeholder(tf.string)
    enqueue_filename = filename_queue.enqueue(filename_to_enqueue)
    close_filename_queue = filename_queue.close()
    for line in open(list_file, 'rb'):
        filename = line.rstrip(b'\n')
        if filename:
            session.run(enqueue_filename,
                        feed_dict={filename_to_enqueue: filename})
    session.run(close_filename_queue)
    try:  # serve the queue until reduce releases this task
        session.run(files_released.dequeue())
    except tf.errors.OutOfRangeError:
        pass

if config.task_type == 'reduce':
    initializer = tf.global_variables_initializer()
    session.run(initializer)
    session.run(counter_ready.close())
    take_reports = reports.dequeue_many(num_maps)
    while True:
        try:
            files, words = session.run(take_reports,
                                       options=tf.RunOptions(timeout_in_ms=2000))
            break
        except tf.errors.DeadlineExceededError:
            print('{} words so far'.format(session.run(total_word_count)))
    total = session.run(total_word_count)
    if total != words.sum():
        print('the total {} is not the sum of the maps\' reports {}'.format(total, words.sum()))
        sys.exit(1)
    print('{} files'.format(files.sum()))
    print('final total: {}'.format(total))
    session.run(files_released.close())

if config.task_type == 'map':
    try:  # wait until reduce has initialized the total
        session.run(counter_ready.dequeue())
    except tf.errors.OutOfRangeError:
        pass
    filenames_from_queue = filename_queue.dequeue_up_to(BATCH)
    word_count_to_add = tf.placeholder(tf.int64)
    add_to_total = tf.assign_add(total_word_count,
                                 word_count_to_add,
                                 use_locking=True)
    files_counted = tf.placeholder(tf.int64)
    words_counted = tf.placeholder(tf.int64)
    send_report = reports.enqueue([files_counted, words_counted])
    files_done, words_done = 0, 0
    while True:
        try:
            filenames = session.run(filenames_from_queue)
        except tf.errors.OutOfRangeError:
            break
        texts = []
        for filename in filenames:
            with open(filename, 'rb') as f:
                texts.append(f.read())
        batch_words = count_words(b'\n'.join(texts))  # no word spans two files
        session.run(add_to_total,
                    feed_dict={word_count_to_add: batch_words})
        files_done += len(filenames)
        words_done += batch_words
    session.run(send_report, feed_dict={files_counted: files_done, words_counted: words_done})
    print('{} words in {} files'.format(words_done, files_done))
