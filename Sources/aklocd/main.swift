print("aklocd")
