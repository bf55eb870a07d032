import AklocCore
