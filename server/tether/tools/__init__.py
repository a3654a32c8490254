"""The tools the model is given, a module each; ``builtin.builtin_tools`` lists them.

Nothing is imported here: a module that needs one tool (or ``base``) does not import
them all, and the server's start does not wait for them."""
