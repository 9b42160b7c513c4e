# The first seed's program: every task of a cluster runs it and learns its role from
# TF_CONFIG, read both ways the seed shows (by hand, and through RunConfig), which must
# agree. ps tasks serve until the job ends; each worker computes on the ps task to show
# the cluster works, then ends.
#
#   tw launch --cluster ps=1,worker=2 --success all-workers -- \
#       python3 examples/python/cluster_roles.py
import json
import os

import tensorweave.compat.v1 as tf

tf_config = json.loads(os.environ['TF_CONFIG'])
cluster_spec = tf.train.ClusterSpec(tf_config['cluster'])
task_type = tf_config['task']['type']
task_id = tf_config['task']['index']

config = tf.contrib.learn.RunConfig()
assert config.cluster_spec == cluster_spec, (config.cluster_spec, cluster_spec)
assert (config.task_type, config.task_id) == (task_type, task_id)

server = tf.train.Server(cluster_spec,
                         job_name=task_type,
                         task_index=task_id)
print('{}:{} of {} (chief: {})'.format(task_type, task_id, cluster_spec.as_dict(),
                                       config.is_chief))

if task_type == 'ps':
    server.join()  # for parameter servers: serve until the job ends
else:
    with tf.device('/job:ps/task:0'):
        product = tf.matmul(tf.constant([[1.0, 2.0]]), tf.constant([[3.0], [4.0]]))
    # Only the ps task and this worker: a session waits for every task it may use, and the
    # other worker may have finished already.
    only = tf.ConfigProto(device_filters=['/job:ps', '/job:worker/task:%d' % task_id])
    with tf.Session(server.target, config=only) as session:
        print('computed on /job:ps/task:0: {}'.format(session.run(product)[0][0]))
