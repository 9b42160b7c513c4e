// The seeds' first program, create_local_server: a one-task local server, a session on its
// target, and a string constant fetched through it.
//
//   $ build/examples/hello
//   Hello, distributed tensorweave!
#include <iostream>

#include "tensorweave/tensorweave.h"

int main() {
  auto server = tw::Server::CreateLocal();  // already started, on a port the OS chose
  if (!server.ok()) {
    std::cerr << "hello: " << server.status().message() << "\n";
    return 1;
  }
  tw::Scope root = tw::Scope::NewRootScope();
  auto greeting =
      tw::ops::Const(root, tw::Tensor::Scalar<std::string>("Hello, distributed tensorweave!"));
  tw::ClientSession session(root, {.target = (*server)->target()});
  auto out = session.Run({}, {greeting});
  if (!out.ok()) {
    std::cerr << "hello: " << out.status().message() << "\n";
    return 1;
  }
  std::cout << (*out)[0].scalar<std::string>() << std::endl;
  (*server)->Stop();
  return 0;
}
