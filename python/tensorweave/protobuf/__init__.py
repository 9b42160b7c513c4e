"""Protocol buffers of tensorweave's own that TF 1.x programs build (tf.train.ServerDef,
ClusterDef, JobDef), generated from proto/ at build time with Debian's protoc and read with
python3-protobuf."""
