# The seeds' create_local_server program, as written but for its import line: a one-task
# server in this process, a session on its target, a string constant fetched through it.
import tensorweave.compat.v1 as tf

c = tf.constant("Hello, distributed TensorFlow!")
server = tf.train.Server.create_local_server()
sess = tf.compat.v1.Session(server.target)  # Use compat.v1.Session for older API usage
print(sess.run(c))
